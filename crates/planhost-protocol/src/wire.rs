//! The two shapes every wire type takes. Params refuse unknown fields (a typo must not pass
//! silently as an absent field); results accept them, so a client keeps working against a newer
//! host that added one. Field names are camelCase on the wire.

macro_rules! params {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name { $($body)* }
    };
}

macro_rules! result {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct $name { $($body)* }
    };
}

/// `Option<Option<T>>`: absent → `None`, `null` → `Some(None)`, a value → `Some(Some(v))`.
pub(crate) mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<T: Serialize, S: Serializer>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// `tools.execute`'s `tool`: one of the six host tools the host runs
/// ([`planhost_core::HostTool::RUN_BY_HOST`]), by its canonical name; the planning tools and
/// the utilities are refused as params (they are host methods or the client's).
pub(crate) mod run_by_host {
    use planhost_core::HostTool;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer>(tool: &HostTool, s: S) -> Result<S::Ok, S::Error> {
        tool.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<HostTool, D::Error> {
        let name = String::deserialize(d)?;
        HostTool::RUN_BY_HOST
            .into_iter()
            .find(|tool| tool.as_str() == name)
            .ok_or_else(|| {
                let expected: Vec<String> = HostTool::RUN_BY_HOST
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect();
                serde::de::Error::custom(format!(
                    "unknown variant `{name}`, expected one of {}",
                    expected.join(", ")
                ))
            })
    }

    pub(crate) fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = HostTool::RUN_BY_HOST.iter().map(|t| t.as_str()).collect();
        schemars::json_schema!({
            "description": "A tool the host runs itself: one of `HostTool`'s first six.",
            "type": "string",
            "enum": names,
        })
    }
}
