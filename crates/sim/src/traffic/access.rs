//! Reading a class's access control, `access = { policy = "fairbat", ... }`: the
//! class's arriving files (chunks) wait in a queue at the sender and become flows
//! only when the controller admits them. The policies, their keys, defaults and
//! checks are those of `cclab_control` (docs/protocols.md, "Access control"); this
//! reader only supplies the values from the scenario table, durations with a unit.
use crate::settings::{err, Duration, Result, ScenarioError, Table};
use cclab_control::read::{self, Kind, Setting, Source};
use cclab_control::{AccessParams, ParamError};

/// Values of an access table, key by key, for `cclab_control::read`.
struct TableSource<'t, 'v> {
    t: &'t mut Table<'v>,
}

impl Source for TableSource<'_, '_> {
    fn get(&mut self, key: &'static str, kind: Kind) -> std::result::Result<Option<Setting>, ParamError> {
        let to_param = |e: ScenarioError| ParamError { key: key.to_string(), message: e.message };
        Ok(match kind {
            Kind::Number => self.t.get::<f64>(key).map_err(to_param)?.map(Setting::Number),
            Kind::Seconds => self.t.get::<Duration>(key).map_err(to_param)?.map(|d| Setting::Number(d.0.as_secs_f64())),
            Kind::Choice(_) => self.t.get::<String>(key).map_err(to_param)?.map(Setting::Choice),
        })
    }
}

/// The class's `access` table, if any (None: every file is a flow when it arrives).
pub fn read_access(class: &mut Table) -> Result<Option<AccessParams>> {
    let Some(mut t) = class.table("access")? else { return Ok(None) };
    let policy: String = t.req("policy", "the access policy: \"static\", \"rate_tracking\" or \"fairbat\"")?;
    let params = read::read(&policy, &mut TableSource { t: &mut t }).map_err(|e| ScenarioError::new(t.key_path(&e.key), e.message))?;
    t.finish(&format!("a {policy} access policy"))?;
    Ok(Some(params))
}

/// Why `access` does not apply to a class, if it does not: only classes of finite
/// files sent by a window protocol queue chunks.
pub fn access_misfit(kind: &str, window: bool) -> Option<String> {
    if !matches!(kind, "poisson" | "flow_list") {
        return Some(format!("only poisson and flow_list classes take `access` (their files are the chunks; this class is {kind})"));
    }
    if !window {
        return Some("access control starts each chunk as a TCP connection: the class needs a window protocol".into());
    }
    None
}

/// Check a canonical access configuration at `path`.
pub fn check_access(p: &AccessParams, path: &str) -> Result<()> {
    p.validate().or_else(|e| err(format!("{path}.{}", e.key), e.message))
}
