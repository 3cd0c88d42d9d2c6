//! The database and its WAL and shared-memory files are readable by their owner only.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use planhost_core::{ManualClock, Timestamp};
use planhost_store::Store;

fn mode(path: &std::path::Path) -> u32 {
    fs_err::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_database_files_are_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    let store = Store::open(
        &db,
        clock.clone(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap()
    .store;
    for suffix in ["", "-wal", "-shm"] {
        let file = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    drop(store);
    // A database an older planhost left world-readable is tightened at the next open.
    fs_err::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let _store = Store::open(
        &db,
        clock,
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap()
    .store;
    assert_eq!(mode(&db), 0o600);
}
