//! Reading an access policy from user settings, key by key: the one place that
//! knows the keys of each policy and starts from its defaults. A caller supplies
//! the values through [`Source`] (the packet-level engine from its scenario tables,
//! with durations written with a unit; the flow-level bindings from a Python dict)
//! and reports unknown keys itself (every key this reader asks for is known).
use crate::params::{AccessParams, FairbatParams, Fractional, GainScale, GainSchedule, ParamError, QueueMeasure, RateTrackingParams, StaticParams};

/// What kind of value a key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A plain number.
    Number,
    /// A time span in seconds (a packet-level scenario writes it with a unit, "120s").
    Seconds,
    /// One of these names.
    Choice(&'static [&'static str]),
}

/// A value a [`Source`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Setting {
    Number(f64),
    Choice(String),
}

/// Where settings come from.
pub trait Source {
    /// The value of `key`, if given; an error (naming the key) if it is not of `kind`.
    fn get(&mut self, key: &'static str, kind: Kind) -> Result<Option<Setting>, ParamError>;
}

const FRACTIONAL: &[&str] = &["alternate", "weight"];
const MEASURE: &[&str] = &["mean", "sample"];
const GAIN_SCALE: &[&str] = &["none", "arrivals"];
const GAIN_SCHEDULE: &[&str] = &["harmonic", "sign"];

struct Reader<'a> {
    src: &'a mut dyn Source,
}

impl Reader<'_> {
    fn num(&mut self, key: &'static str, kind: Kind, slot: &mut f64) -> Result<(), ParamError> {
        match self.src.get(key, kind)? {
            Some(Setting::Number(x)) => *slot = x,
            Some(Setting::Choice(s)) => return Err(ParamError { key: key.into(), message: format!("expected a number, got {s:?}") }),
            None => {}
        }
        Ok(())
    }

    fn choice(&mut self, key: &'static str, names: &'static [&'static str]) -> Result<Option<usize>, ParamError> {
        match self.src.get(key, Kind::Choice(names))? {
            Some(Setting::Choice(s)) => names.iter().position(|n| *n == s).map(Some).ok_or_else(|| ParamError {
                key: key.into(),
                message: format!("expected one of {}, got {s:?}", names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")),
            }),
            Some(Setting::Number(x)) => Err(ParamError { key: key.into(), message: format!("expected one of {names:?}, got {x}") }),
            None => Ok(None),
        }
    }

    fn fractional(&mut self, slot: &mut Fractional) -> Result<(), ParamError> {
        if let Some(i) = self.choice("fractional", FRACTIONAL)? {
            *slot = [Fractional::Alternate, Fractional::Weight][i];
        }
        Ok(())
    }

    fn limits(&mut self, m0: &mut f64, m_min: &mut f64, m_max: &mut f64) -> Result<(), ParamError> {
        self.num("m0", Kind::Number, m0)?;
        self.num("m_min", Kind::Number, m_min)?;
        self.num("m_max", Kind::Number, m_max)
    }
}

/// Read the parameters of access policy `policy` ("static", "rate_tracking" or
/// "fairbat") from `src` over its defaults, and check them.
pub fn read(policy: &str, src: &mut dyn Source) -> Result<AccessParams, ParamError> {
    let mut r = Reader { src };
    let params = match policy {
        "static" => {
            let mut p = StaticParams { limit: f64::NAN, fractional: Fractional::default() };
            r.num("limit", Kind::Number, &mut p.limit)?;
            if p.limit.is_nan() {
                return Err(ParamError { key: "limit".into(), message: "missing: a static policy needs the limit M".into() });
            }
            r.fractional(&mut p.fractional)?;
            AccessParams::Static(p)
        }
        "rate_tracking" => {
            let mut p = RateTrackingParams::default();
            r.limits(&mut p.m0, &mut p.m_min, &mut p.m_max)?;
            r.num("period", Kind::Seconds, &mut p.period_s)?;
            r.num("ewma", Kind::Number, &mut p.ewma)?;
            r.num("rate_ewma", Kind::Number, &mut p.rate_ewma)?;
            r.num("step", Kind::Number, &mut p.step)?;
            r.num("step_end", Kind::Number, &mut p.step_end)?;
            r.num("tau", Kind::Number, &mut p.tau)?;
            r.num("drain", Kind::Number, &mut p.drain)?;
            r.fractional(&mut p.fractional)?;
            AccessParams::RateTracking(p)
        }
        "fairbat" => {
            let mut p = FairbatParams::default();
            r.limits(&mut p.m0, &mut p.m_min, &mut p.m_max)?;
            r.num("period", Kind::Seconds, &mut p.period_s)?;
            r.num("tau", Kind::Number, &mut p.tau)?;
            r.num("gain_start", Kind::Number, &mut p.gain_start)?;
            r.num("gain_end", Kind::Number, &mut p.gain_end)?;
            r.num("gain_updates", Kind::Number, &mut p.gain_updates)?;
            if let Some(i) = r.choice("measure", MEASURE)? {
                p.measure = [QueueMeasure::Mean, QueueMeasure::Sample][i];
            }
            r.num("trend", Kind::Number, &mut p.trend)?;
            if let Some(i) = r.choice("gain_scale", GAIN_SCALE)? {
                p.gain_scale = [GainScale::None, GainScale::Arrivals][i];
            }
            if let Some(i) = r.choice("gain_schedule", GAIN_SCHEDULE)? {
                p.gain_schedule = [GainSchedule::Harmonic, GainSchedule::Sign][i];
            }
            r.fractional(&mut p.fractional)?;
            AccessParams::Fairbat(p)
        }
        other => {
            return Err(ParamError {
                key: "policy".into(),
                message: format!("unknown access policy {other:?}; expected \"static\", \"rate_tracking\" or \"fairbat\""),
            })
        }
    };
    params.validate()?;
    Ok(params)
}

/// A value of a plain map of settings: a number, or a name (`fractional`, `measure`).
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    Number(f64),
    Name(String),
}

/// Settings given as a map of plain values (times in seconds), as the flow-level
/// simulator and the real-network transfer manager take them from Python.
pub type Params = std::collections::HashMap<String, Param>;

/// A [`Source`] over a map, remembering the keys it was asked for.
struct MapSource<'a> {
    map: &'a Params,
    asked: Vec<&'static str>,
}

impl Source for MapSource<'_> {
    fn get(&mut self, key: &'static str, kind: Kind) -> Result<Option<Setting>, ParamError> {
        self.asked.push(key);
        let wrong = |what: &str| ParamError { key: key.into(), message: format!("expected {what}") };
        match (self.map.get(key), kind) {
            (None, _) => Ok(None),
            (Some(Param::Name(s)), Kind::Choice(_)) => Ok(Some(Setting::Choice(s.clone()))),
            (Some(Param::Number(x)), Kind::Number | Kind::Seconds) => Ok(Some(Setting::Number(*x))),
            (Some(_), Kind::Choice(names)) => Err(wrong(&format!("one of {names:?}"))),
            (Some(_), _) => Err(wrong("a number")),
        }
    }
}

/// Read access policy `policy` from `map` (as [`read`]); `also` are further keys the
/// caller knows, and every other key is an error naming the keys allowed.
pub fn read_map(policy: &str, map: &Params, also: &[&'static str]) -> Result<AccessParams, ParamError> {
    let mut src = MapSource { map, asked: also.to_vec() };
    let params = read(policy, &mut src)?;
    only(map, &src.asked)?;
    Ok(params)
}

/// An error for the first key of `map` (in name order) that is not in `allowed`.
pub fn only(map: &Params, allowed: &[&str]) -> Result<(), ParamError> {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    match keys.into_iter().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(ParamError { key: k.clone(), message: format!("unknown parameter (allowed: {})", allowed.join(", ")) }),
        None => Ok(()),
    }
}
