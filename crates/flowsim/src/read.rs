//! Reading a flow-level scenario's classes from plain settings (what the Python
//! layer passes: a kind, a policy, a route and a map of numbers and names), with
//! every error naming `classes[i].key`. The one place that knows each kind's and
//! each policy's keys; access policies are read by `cclab_control::read`.
use crate::model::{Class, ClassKind, FlowsimError, Policy, SizeDist, Source};
use cclab_control::read::{self as access, Param, Params};
use cclab_control::ParamError;

/// A class as given: name, kind ("short", "long", "background"), policy (for a
/// background class), route (link indices) and parameters.
pub struct ClassSpec<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub policy: &'a str,
    pub route: &'a [usize],
    pub params: &'a Params,
}

/// The keys every background class takes: its source (saturated, or a stream of
/// `rate` flows of `mean_size` with Pareto `shape`).
const SOURCE_KEYS: [&str; 3] = ["rate", "mean_size", "shape"];

/// The parameters of class `i`, with errors naming `classes[i].key`.
struct Reader<'a> {
    at: String,
    p: &'a Params,
}

impl Reader<'_> {
    fn fail<T>(&self, key: &str, msg: impl std::fmt::Display) -> Result<T, FlowsimError> {
        Err(FlowsimError(format!("{}.{key}: {msg}", self.at)))
    }
    fn req(&self, key: &str) -> Result<f64, FlowsimError> {
        self.opt(key).map_or_else(|| self.fail(key, "required parameter is missing (a number)"), Ok)
    }
    fn opt(&self, key: &str) -> Option<f64> {
        match self.p.get(key) {
            Some(Param::Number(x)) => Some(*x),
            _ => None,
        }
    }
    fn only(&self, allowed: &[&str]) -> Result<(), FlowsimError> {
        access::only(self.p, allowed).or_else(|e| self.fail(&e.key, e.message))
    }
    fn size(&self) -> SizeDist {
        let mean = self.opt("mean_size").unwrap_or(1.0);
        match self.opt("shape") {
            None => SizeDist::Exp { mean },
            Some(shape) => SizeDist::Pareto { mean, shape },
        }
    }
    fn count(&self, key: &str) -> Result<u32, FlowsimError> {
        let v = self.req(key)?;
        if !(v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64) {
            return self.fail(key, format!("must be a non-negative integer, got {v}"));
        }
        Ok(v as u32)
    }
    /// `only` over the source's keys and `extra`.
    fn allow(&self, extra: &[&str]) -> Result<(), FlowsimError> {
        let keys: Vec<&str> = SOURCE_KEYS.iter().chain(extra).copied().collect();
        self.only(&keys)
    }
}

/// Read class `i`.
pub fn class(i: usize, spec: &ClassSpec) -> Result<Class, FlowsimError> {
    let r = Reader { at: format!("classes[{i}]"), p: spec.params };
    let kind = match spec.kind {
        "short" => {
            r.only(&["rate", "mean_size", "shape"])?;
            ClassKind::Short { rate: r.req("rate")?, size: r.size() }
        }
        "long" => {
            r.only(&["count"])?;
            ClassKind::Long { count: r.count("count")? }
        }
        "background" => {
            let source = match r.opt("rate") {
                Some(rate) => Source::Stream { rate, size: r.size() },
                None => Source::Saturated,
            };
            ClassKind::Background { source, policy: policy(&r, spec.policy)? }
        }
        other => return r.fail("kind", format!("unknown kind {other:?} (short, long, background)")),
    };
    Ok(Class { name: spec.name.to_string(), route: spec.route.to_vec(), kind })
}

/// A background class's policy and its parameters.
fn policy(r: &Reader, policy: &str) -> Result<Policy, FlowsimError> {
    Ok(match policy {
        "threshold" => {
            r.allow(&["n0", "x_next"])?;
            let n0 = r.req("n0")?;
            if !(n0 >= -1.0 && n0.fract() == 0.0 && n0 <= i32::MAX as f64) {
                return r.fail("n0", format!("must be an integer >= -1, got {n0}"));
            }
            Policy::Threshold { n0: n0 as i32, x_next: r.opt("x_next") }
        }
        "implementable" => {
            r.allow(&["x_cap"])?;
            Policy::Implementable { x_cap: r.req("x_cap")? }
        }
        "wtcp" => {
            r.allow(&["w"])?;
            Policy::Wtcp { w: r.req("w")? }
        }
        // Access control: parameters, defaults and checks from cclab_control.
        "access_control" | "fairbat" | "rate_tracking" => {
            let name = if policy == "access_control" { "static" } else { policy };
            Policy::Access(access::read_map(name, r.p, &SOURCE_KEYS).or_else(|e: ParamError| r.fail(&e.key, e.message))?)
        }
        "vanilla" => {
            r.allow(&[])?;
            Policy::Vanilla
        }
        "low_priority" => {
            r.allow(&[])?;
            Policy::LowPriority
        }
        other => {
            return r.fail(
                "policy",
                format!("unknown policy {other:?} (threshold, implementable, wtcp, access_control, fairbat, rate_tracking, vanilla, low_priority)"),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(kv: &[(&str, Param)]) -> Params {
        kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    fn read(kind: &str, policy: &str, kv: &[(&str, Param)]) -> Result<Class, String> {
        let params = map(kv);
        class(2, &ClassSpec { name: "c", kind, policy, route: &[0, 1], params: &params }).map_err(|e| e.0)
    }

    #[test]
    fn classes_are_read_with_their_keys() {
        use Param::*;
        let c = read("short", "", &[("rate", Number(3.0)), ("mean_size", Number(2.0)), ("shape", Number(1.5))]).unwrap();
        assert_eq!(c.kind, ClassKind::Short { rate: 3.0, size: SizeDist::Pareto { mean: 2.0, shape: 1.5 } });
        assert_eq!(c.route, vec![0, 1]);
        let c = read("background", "threshold", &[("n0", Number(-1.0))]).unwrap();
        assert_eq!(c.kind, ClassKind::Background { source: Source::Saturated, policy: Policy::Threshold { n0: -1, x_next: None } });
        let c = read("background", "fairbat", &[("rate", Number(0.5)), ("measure", Name("sample".into()))]).unwrap();
        assert!(matches!(c.kind, ClassKind::Background { source: Source::Stream { rate, .. }, policy: Policy::Access(_) } if rate == 0.5));
    }

    #[test]
    fn errors_name_the_class_and_key() {
        use Param::*;
        let cases: &[(&str, &str, &[(&str, Param)], &str)] = &[
            ("short", "", &[], "classes[2].rate: required parameter is missing (a number)"),
            ("long", "", &[("count", Number(1.5))], "classes[2].count: must be a non-negative integer, got 1.5"),
            ("long", "", &[("count", Number(1.0)), ("z", Number(0.0))], "classes[2].z: unknown parameter (allowed: count)"),
            ("background", "threshold", &[("n0", Number(-2.0))], "classes[2].n0: must be an integer >= -1, got -2"),
            ("background", "wtcp", &[("w", Number(1.0)), ("x_cap", Number(1.0))], "classes[2].x_cap: unknown parameter (allowed: rate, mean_size, shape, w)"),
            ("background", "fairbat", &[("measure", Number(1.0))], "classes[2].measure: expected one of [\"mean\", \"sample\"]"),
            ("background", "static", &[], "classes[2].policy: unknown policy \"static\" (threshold, implementable, wtcp, access_control, fairbat, rate_tracking, vanilla, low_priority)"),
            ("medium", "", &[], "classes[2].kind: unknown kind \"medium\" (short, long, background)"),
        ];
        for (kind, policy, kv, want) in cases {
            assert_eq!(read(kind, policy, kv).unwrap_err(), *want);
        }
    }
}
