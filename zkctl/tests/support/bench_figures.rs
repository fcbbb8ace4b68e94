//! Reading a bench's `name value unit` lines, for zkctl's tests and zkctl-bench's (which
//! includes this file by path).

/// Parses `name value unit` lines.
pub fn figures(out: &str) -> Vec<(String, f64, String)> {
    out.lines()
        .map(|l| {
            let parts: Vec<&str> = l.split(' ').collect();
            assert_eq!(parts.len(), 3, "not `name value unit`: {l}");
            (
                parts[0].to_string(),
                parts[1].parse().expect(l),
                parts[2].to_string(),
            )
        })
        .collect()
}

/// The value of figure `name`.
pub fn value(figures: &[(String, f64, String)], name: &str) -> f64 {
    figures
        .iter()
        .find(|(n, _, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {figures:?}"))
        .1
}

pub fn has(figures: &[(String, f64, String)], name: &str, unit: &str) {
    assert!(
        figures
            .iter()
            .any(|(n, v, u)| n == name && u == unit && *v >= 0.0),
        "no {name} in {figures:?}"
    );
}
