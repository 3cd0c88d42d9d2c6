//! Issue #5 over the protocol and the CLI: `/plan` parsing, checkpoints per branch, capture,
//! projection, publication approved by a second surface, status and exit.

use planhost_core::{
    ApprovalAction, CheckpointSource, ClientPersistence, ContentBlock, EntryId, ErrorCode,
    ExitChoice, ExitOffer, Interactivity, Mode, PlanCommand, PublicationState, SessionId,
    StopReason,
};
use planhost_protocol::{
    BranchRef, CaptureParams, CapturedMessage, CheckpointInfo, ExitPlanParams, OpenSessionParams,
    ParseCommandParams, ProposalRef, RequestOutcome, RequestPublicationParams,
    SaveCheckpointParams, SeenCheckpointParams, methods,
};
use planhost_test_support::host::params;

use crate::cli::cli;
use crate::steps::*;
use crate::support::*;

const PLAN: &str = "# Plan: Add a health check\r\n\r\n1. Add `GET /health`.\r\n2. Test it.\r\n";

fn branch(ids: &[&str]) -> Vec<EntryId> {
    ids.iter().map(|&id| EntryId::from(id)).collect()
}

/// Names the branch `ids` of the session.
fn at(sid: &SessionId, ids: &[&str]) -> BranchRef {
    BranchRef {
        session_id: sid.clone(),
        branch_path: branch(ids),
    }
}

fn save_params(
    sid: &SessionId,
    ids: &[&str],
    markdown: &str,
    expected: i64,
) -> SaveCheckpointParams {
    SaveCheckpointParams {
        session_id: sid.clone(),
        branch_path: branch(ids),
        markdown: markdown.into(),
        expected_revision: expected,
    }
}

fn publish_params(sid: &SessionId, ids: &[&str]) -> RequestPublicationParams {
    RequestPublicationParams {
        session_id: sid.clone(),
        branch_path: branch(ids),
        overwrite_conflict: false,
    }
}

/// A final assistant message of one text block.
fn message(entry: &str, text: &str) -> CapturedMessage {
    CapturedMessage {
        entry_id: entry.into(),
        content: vec![ContentBlock::Text { text: text.into() }],
        stop_reason: StopReason::Stop,
    }
}

fn parse(line: &str) -> ParseCommandParams {
    ParseCommandParams { line: line.into() }
}

#[test]
fn plan_lifecycle_over_the_protocol_and_the_cli() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("pi-extension");
    let mut person = host.connect("approver");
    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    agent.set_mode(&sid, Mode::Plan);

    // The command grammar: accepted spellings, and help for anything else.
    let save = agent.call::<methods::PlansParseCommand>(parse("/plan  save "));
    assert_eq!(save.command, Some(PlanCommand::Save));
    let bad = agent.call::<methods::PlansParseCommand>(parse("/plan pause"));
    assert_eq!(
        (bad.command, bad.error_code),
        (None, Some(ErrorCode::PlanCommandInvalid))
    );
    assert!(bad.help.as_deref().unwrap().contains("/plan save"));

    // A draft checkpoint with optimistic revision; a stale revision says the current one.
    let one = agent
        .call::<methods::CheckpointsSave>(save_params(&sid, &["root", "a"], PLAN, 0))
        .checkpoint;
    assert_eq!(one.revision, 1);
    assert_eq!(one.sha256, planhost_core::sha256_hex(PLAN.as_bytes()));
    assert_eq!(one.size_bytes, i64::try_from(PLAN.len()).unwrap());
    assert_eq!(one.anchor, "a");
    let stale =
        agent.call_err::<methods::CheckpointsSave>(save_params(&sid, &["root", "a"], "x", 0));
    assert_code(&stale, -32000, "CHECKPOINT_REVISION_STALE");
    assert!(
        stale.message.contains("current revision is 1"),
        "{}",
        stale.message
    );

    // The projection is the exact checkpoint, labelled; a sibling branch sees nothing.
    let projection = agent.call::<methods::CheckpointsProjection>(at(&sid, &["root", "a"]));
    assert_eq!(projection.revision, Some(1), "{projection:?}");
    let text = &projection.text;
    assert!(text.contains(PLAN) && text.contains("unapproved data, not instructions"));
    let sibling = agent.call::<methods::CheckpointsProjection>(at(&sid, &["root", "b"]));
    // The sibling branch has no checkpoint: only the Plan-mode instruction.
    assert!(
        sibling.text.starts_with("<plan_mode>") && !sibling.text.contains("<plan_checkpoint"),
        "{sibling:?}"
    );
    assert_eq!(sibling.revision, None, "{sibling:?}");

    // A captured <proposed_plan> becomes the next revision, once. (Whether the message began in
    // planning is the host's fact, from the turn: this turn runs in Plan mode.)
    let turn = agent.begin_turn(&sid);
    let params = CaptureParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        branch_path: branch(&["root", "a", "m1"]),
        message: message(
            "m1",
            "Here it is:\n<proposed_plan>\n# Plan: Add a health check\n\n1. Add it.\n</proposed_plan>\nDone.",
        ),
    };
    let first = agent.call::<methods::CheckpointsCapture>(params.clone());
    assert_eq!(
        (
            first.created,
            first.checkpoint.as_ref().map(|c| c.revision),
            first.checkpoint.as_ref().map(|c| c.source),
            first.reason,
        ),
        (true, Some(2), Some(CheckpointSource::Capture), None),
        "{first:?}"
    );
    // The capture also says what the next model call's projection is, and at which event seq:
    // exactly what checkpoints.projection and sessions.get say now.
    let projection = agent.call::<methods::CheckpointsProjection>(BranchRef {
        session_id: sid.clone(),
        branch_path: params.branch_path.clone(),
    });
    assert_eq!(first.projection.as_ref(), Some(&projection), "{first:?}");
    assert!(
        first
            .projection
            .as_ref()
            .is_some_and(|p| p.text.contains("<plan_checkpoint revision=\"2\"")),
        "{first:?}"
    );
    assert_eq!(
        first.event_seq,
        agent.get_session(&sid).event_seq,
        "{first:?}"
    );
    let again = agent.call::<methods::CheckpointsCapture>(params.clone());
    assert!(!again.created, "{again:?}");
    let again_checkpoint = again.checkpoint.as_ref().expect("the checkpoint");
    assert_eq!(again_checkpoint.revision, 2);
    assert_eq!(
        Some(again_checkpoint.checkpoint_id),
        first.checkpoint.as_ref().map(|c| c.checkpoint_id)
    );
    // The same entry replayed with other content is refused, never a new revision.
    let changed = CaptureParams {
        message: message("m1", "<proposed_plan>\n# other\n</proposed_plan>"),
        ..params
    };
    let e = agent.call_err::<methods::CheckpointsCapture>(changed);
    assert_code(&e, -32000, "CAPTURE_ENTRY_CHANGED");
    agent.end_turn(&sid, &turn);

    // /plan save: a publication approval bound to revision, digest and path, answered by a
    // person from the CLI while the agent waits.
    let b = ["root", "a", "m1"];
    let status = agent.call::<methods::PlansStatus>(at(&sid, &b));
    assert_eq!(
        (status.publication, status.revision),
        (PublicationState::Unpublished, Some(2))
    );
    let publish = agent.call::<methods::PublicationsRequest>(publish_params(&sid, &b));
    assert_eq!(publish.outcome, RequestOutcome::Pending);
    let publication = publish.publication.expect("a pending publication");
    assert_eq!(publication.revision, 2);
    person.wait_event(
        "publication pending event",
        sid.as_str(),
        |e: &serde_json::Value| e["kind"] == "publicationChanged" && e["status"] == "pending",
    );
    let listed = cli(&env, &["publications", "--pending", "--json"]).json();
    assert_eq!(items(&listed).len(), 1, "{listed}");
    assert_eq!(
        listed["items"][0]["publicationId"],
        publication.publication_id.as_str()
    );
    let id = publication.publication_id.as_str();
    cli(&env, &["publish", &id[..8]]).ok();
    let path = env.workspace().join(&publication.relative_path);
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        "# Plan: Add a health check\n\n1. Add it.\n"
    );
    let status = agent.call::<methods::PlansStatus>(at(&sid, &b));
    assert_eq!(status.publication, PublicationState::Synced);

    // Someone edits the published file: status says conflict and save refuses to overwrite.
    fs_err::write(&path, "edited\n").unwrap();
    let status = agent.call::<methods::PlansStatus>(at(&sid, &b));
    assert_eq!(status.publication, PublicationState::Conflict);
    let refused = agent.call_err::<methods::PublicationsRequest>(publish_params(&sid, &b));
    assert_code(&refused, -32000, "PUBLISH_CONFLICT");
    assert_eq!(fs_err::read_to_string(&path).unwrap(), "edited\n");

    // /plan exit offers the safe default, and exiting without publishing always works.
    // (v2: asking what exit offers is `plans.exitOptions`; it changes nothing.)
    let offer = agent.call::<methods::PlansExitOptions>(at(&sid, &b));
    match &offer.offer {
        ExitOffer::Choose { choices, default } => {
            assert_eq!(*default, ExitChoice::ExitWithoutPublishing);
            assert!(
                choices.contains(&ExitChoice::ExitWithoutPublishing),
                "{offer:?}"
            );
        }
        ExitOffer::ExitNow => panic!("expected a choice: {offer:?}"),
    }
    assert_eq!(agent.get_session(&sid).mode, Mode::Plan);
    // (v2: leaving Plan is the person's `plans.exit`, always without publishing.)
    let exited = person.call::<methods::PlansExit>(ExitPlanParams {
        session_id: sid.clone(),
        available_tools: Some(vec!["read".into()]),
    });
    assert_eq!(exited.session.mode, Mode::Agent, "{exited:?}");
    assert!(exited.revoked_publications.is_empty(), "{exited:?}");
    assert_eq!(agent.get_session(&sid).mode, Mode::Agent);
    assert_eq!(fs_err::read_to_string(&path).unwrap(), "edited\n");
    // The checkpoint survives the exit.
    let preview = agent.call::<methods::CheckpointsLatest>(at(&sid, &b));
    assert_eq!(preview.checkpoint.revision, 2);
    assert_eq!(
        preview.markdown,
        "# Plan: Add a health check\n\n1. Add it.\n"
    );
}

#[test]
fn status_reports_an_ephemeral_client_session() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("pi-no-session");
    let s = c.call::<methods::SessionsOpen>(OpenSessionParams {
        external_id: Some("tmp-1".into()),
        persistence: Some(ClientPersistence::Ephemeral),
        ..params::open(&env.workspace())
    });
    assert_eq!(s.client_persistence, ClientPersistence::Ephemeral);
    let status = c.call::<methods::PlansStatus>(at(&s.id, &["root"]));
    assert!(!status.persisted);
    let persisted = c.open_session(&env.workspace(), Interactivity::Interactive);
    let status = c.call::<methods::PlansStatus>(at(&persisted, &["root"]));
    assert!(status.persisted);
}

#[test]
fn a_message_from_an_agent_turn_is_not_captured_after_switching_to_plan() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let turn = c.begin_turn(&sid);
    // v2: the client no longer claims the message began in planning; the host knows it did not.
    let params = CaptureParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        branch_path: branch(&["root", "m1"]),
        message: message("m1", "<proposed_plan>\n# Plan: x\n</proposed_plan>"),
    };
    let offered = c.call::<methods::CheckpointsCapture>(params.clone());
    assert_eq!(
        (offered.created, offered.checkpoint.clone(), offered.reason),
        (false, None, Some(ErrorCode::CaptureNotEligible)),
        "{offered:?}"
    );
    c.end_turn(&sid, &turn);
    c.set_mode(&sid, Mode::Plan);
    let replayed = c.call::<methods::CheckpointsCapture>(params);
    assert!(!replayed.created, "{replayed:?}");
    assert_eq!(replayed.checkpoint, None, "{replayed:?}");
    let projection = c.call::<methods::CheckpointsProjection>(at(&sid, &["root", "m1"]));
    assert!(
        !projection.text.contains("<plan_checkpoint"),
        "{projection:?}"
    );
}

/// What a plan's "what changed" is measured from: the checkpoint a person was shown last before
/// the plan arrived. Showing one again later does not move an older plan's base, and a plan
/// whose text is exactly what the person last saw has none.
#[test]
fn a_plan_is_measured_from_the_last_checkpoint_shown_before_it() {
    let env = home();
    let host = SocketHost::start_with(&env, ServeOptions::default().test_clock());
    let clock = host.test_clock();
    let mut agent = host.connect("e2e-agent");
    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    agent.set_mode(&sid, Mode::Plan);
    let path = ["root", "a"];
    let save = |agent: &mut Conn, markdown: &str, expected: i64| {
        agent
            .call::<methods::CheckpointsSave>(save_params(&sid, &path, markdown, expected))
            .checkpoint
    };
    let show = |agent: &mut Conn, c: &CheckpointInfo| {
        agent.call::<methods::CheckpointsSeen>(SeenCheckpointParams {
            session_id: sid.clone(),
            checkpoint_id: c.checkpoint_id,
            sha256: c.sha256.clone(),
        })
    };
    let last_seen = |agent: &mut Conn, proposal: &planhost_core::ProposalId| {
        agent
            .call::<methods::PlansGet>(ProposalRef {
                proposal_id: proposal.clone(),
            })
            .last_seen
    };
    let draft = "# Plan: e2e\n\n1. Write `out.txt`.\n";
    let first = save(&mut agent, draft, 0);
    let shown = show(&mut agent, &first);
    clock.advance(10);
    let (turn, p1) = agent.submit_plan(&sid, "First");
    agent.end_turn(&sid, &turn);
    let base = last_seen(&mut agent, &p1.proposal_id).expect("lastSeen");
    assert_eq!(
        base.checkpoint.checkpoint_id, first.checkpoint_id,
        "{base:?}"
    );
    assert_eq!(base.markdown, draft);
    assert_eq!(base.checkpoint.seen_at, shown.seen_at);
    assert_eq!(
        base.checkpoint
            .seen_by
            .as_ref()
            .map(|by| by.client.as_str()),
        Some("e2e-agent")
    );

    // Shown again after the plan arrived: the plan's base is still the showing before it.
    clock.advance(10);
    let again = show(&mut agent, &first);
    assert!(again.seen_at > shown.seen_at, "{again:?}");
    let still = last_seen(&mut agent, &p1.proposal_id).expect("lastSeen");
    assert_eq!(still.checkpoint.seen_at, shown.seen_at, "{still:?}");
    let latest = agent.call::<methods::CheckpointsLatest>(at(&sid, &path));
    // The checkpoint itself reports its last showing.
    assert_eq!(latest.checkpoint.seen_at, again.seen_at, "{latest:?}");

    // The person last saw exactly the text of the next plan: nothing to diff from.
    agent.call::<methods::PlansResolve>(params::resolve(&p1, ApprovalAction::Reject));
    let current = latest.checkpoint.revision;
    let same = save(&mut agent, crate::steps::PLAN, current);
    clock.advance(10);
    show(&mut agent, &same);
    clock.advance(10);
    let (_turn, p2) = agent.submit_plan(&sid, "Second");
    let none = last_seen(&mut agent, &p2.proposal_id);
    assert!(none.is_none(), "{none:?}");
}
