//! Reading a scenario's `[trace]` table: which flows, links and access
//! controllers a run traces, and which links it captures (docs/engine.md, "Traces").
use crate::metrics::trace::{FlowSelector, TraceConfig};
use crate::settings::{err, Duration, Result, Size, Table};
use crate::traffic::ClassConfig;
use std::collections::HashMap;

/// Read the `[trace]` table: `flows` (a list of selectors), `interval`, `packets`,
/// `links`, `pcap` and `access`, names resolved against the scenario's links and classes.
pub fn read_trace(mut t: Table, links: &HashMap<String, u32>, classes: &[ClassConfig]) -> Result<TraceConfig> {
    let class_ix = |name: &str, path: String| -> Result<u32> {
        match classes.iter().position(|c| c.name == name) {
            Some(i) => Ok(i as u32),
            None => err(path, format!("unknown class {name:?}; classes are: {}", classes.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "))),
        }
    };
    let mut flows = Vec::new();
    for (path, v) in t.list("flows")?.unwrap_or_default() {
        flows.push(read_selector(Table::new(v, path)?, &class_ix)?);
    }
    let interval = match t.get::<Duration>("interval")? {
        None => None,
        Some(Duration(d)) if d.0 == 0 => None,
        Some(Duration(d)) => Some(d),
    };
    let packets = t.or("packets", true)?;
    let names = |key: &'static str, t: &mut Table| -> Result<Vec<u32>> {
        let mut out = Vec::new();
        for (j, name) in t.get::<Vec<String>>(key)?.unwrap_or_default().iter().enumerate() {
            match links.get(name) {
                Some(&l) if !out.contains(&l) => out.push(l),
                Some(_) => return err(format!("{}[{j}]", t.key_path(key)), format!("link {name:?} is listed twice")),
                None => {
                    let mut known: Vec<&String> = links.keys().collect();
                    known.sort_by_key(|n| links[*n]);
                    let known: Vec<&str> = known.iter().map(|s| s.as_str()).collect();
                    return err(format!("{}[{j}]", t.key_path(key)), format!("unknown link {name:?}; links are: {}", known.join(", ")));
                }
            }
        }
        Ok(out)
    };
    let traced_links = names("links", &mut t)?;
    let pcap = names("pcap", &mut t)?;
    let mut access = Vec::new();
    for (j, name) in t.get::<Vec<String>>("access")?.unwrap_or_default().iter().enumerate() {
        let path = format!("{}[{j}]", t.key_path("access"));
        let c = class_ix(name, path.clone())?;
        if classes[c as usize].access.is_none() {
            return err(path, format!("class {name:?} has no access control (`access = {{ policy = ... }}` on the class) to trace"));
        }
        access.push(c);
    }
    t.finish("the trace table")?;
    Ok(TraceConfig { flows, interval, packets, links: traced_links, pcap, access })
}

/// One flow selector: `class`, `ids`, `first`, `min_size`, `max_size` (all optional:
/// `{}` selects every flow).
fn read_selector(mut t: Table, class_ix: &dyn Fn(&str, String) -> Result<u32>) -> Result<FlowSelector> {
    let class = match t.get::<String>("class")? {
        Some(name) => Some(class_ix(&name, t.key_path("class"))?),
        None => None,
    };
    let ids = t.get::<Vec<u32>>("ids")?;
    let first = t.get::<u64>("first")?;
    if first == Some(0) {
        return err(t.key_path("first"), "expected at least 1 flow");
    }
    let bytes = |s: Option<Size>| s.map(|Size(b)| b.ceil().max(0.0) as u64);
    let min_bytes = bytes(t.get::<Size>("min_size")?);
    let max_bytes = bytes(t.get::<Size>("max_size")?);
    if let (Some(lo), Some(hi)) = (min_bytes, max_bytes) {
        if lo > hi {
            return err(t.key_path("max_size"), format!("must be at least min_size ({lo} bytes), got {hi} bytes"));
        }
    }
    t.finish("a flow selector")?;
    Ok(FlowSelector { class, ids, first, min_bytes, max_bytes })
}
