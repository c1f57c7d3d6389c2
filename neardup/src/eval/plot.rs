//! Small SVG charts (precision–recall curves) with labelled axes and a legend.
//!
//! Plain SVG 1.1 text, so the files open in any browser and diff well.

const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Precision–recall curves: each series is `(name, [(recall, precision)])`, drawn on
/// the unit square (recall × precision) with a grid, axis labels and a legend.
pub fn pr_curves(title: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    let (w, h, left, top, pw, ph) = (860.0, 560.0, 70.0, 50.0, 560.0, 440.0);
    let x = |r: f64| left + r.clamp(0.0, 1.0) * pw;
    let y = |p: f64| top + (1.0 - p.clamp(0.0, 1.0)) * ph;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        left + pw / 2.0,
        esc(title)
    );
    for k in 0..=10 {
        let v = k as f64 / 10.0;
        s += &format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\n",
            x(v),
            y(0.0),
            x(v),
            y(1.0)
        );
        s += &format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\n",
            x(0.0),
            y(v),
            x(1.0),
            y(v)
        );
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v:.1}</text>\n",
            x(v),
            y(0.0) + 18.0
        );
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v:.1}</text>\n",
            x(0.0) - 6.0,
            y(v) + 4.0
        );
    }
    s += &format!("<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"black\"/>\n");
    s += &format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">recall</text>\n",
        left + pw / 2.0,
        top + ph + 40.0
    );
    s += &format!(
        "<text x=\"18\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1})\">precision</text>\n",
        top + ph / 2.0,
        top + ph / 2.0
    );
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let mut sorted = pts.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let path: Vec<String> = sorted
            .iter()
            .map(|&(r, p)| format!("{:.1},{:.1}", x(r), y(p)))
            .collect();
        s += &format!(
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>\n",
            path.join(" ")
        );
        for &(r, p) in &sorted {
            s += &format!(
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{c}\"/>\n",
                x(r),
                y(p)
            );
        }
        let ly = top + 10.0 + i as f64 * 22.0;
        s += &format!("<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{c}\" stroke-width=\"3\"/>\n", left + pw + 20.0, left + pw + 44.0);
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            left + pw + 50.0,
            ly + 4.0,
            esc(name)
        );
    }
    s += "</svg>\n";
    s
}

/// A log–log scatter chart: each series is `(name, [(x, y)])` with positive values,
/// on decades from 1 to the largest value, with labelled axes and a legend.
pub fn loglog(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> String {
    let (w, h, left, top, pw, ph) = (860.0, 560.0, 80.0, 50.0, 560.0, 440.0);
    let max = |f: fn(&(f64, f64)) -> f64| {
        series
            .iter()
            .flat_map(|s| s.1.iter().map(f))
            .fold(1.0f64, f64::max)
    };
    let (dx, dy) = (
        max(|p| p.0).log10().ceil().max(1.0),
        max(|p| p.1).log10().ceil().max(1.0),
    );
    let x = |v: f64| left + v.max(1.0).log10() / dx * pw;
    let y = |v: f64| top + (1.0 - v.max(1.0).log10() / dy) * ph;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        left + pw / 2.0,
        esc(title)
    );
    for k in 0..=dx as i32 {
        let v = 10f64.powi(k);
        s += &format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\n",
            x(v),
            y(1.0),
            x(v),
            top
        );
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            x(v),
            y(1.0) + 18.0,
            v
        );
    }
    for k in 0..=dy as i32 {
        let v = 10f64.powi(k);
        s += &format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\n",
            left,
            y(v),
            left + pw,
            y(v)
        );
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            left - 6.0,
            y(v) + 4.0,
            v
        );
    }
    s += &format!("<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"black\"/>\n");
    s += &format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
        left + pw / 2.0,
        top + ph + 40.0,
        esc(xlabel)
    );
    s += &format!(
        "<text x=\"18\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1})\">{}</text>\n",
        top + ph / 2.0,
        top + ph / 2.0,
        esc(ylabel)
    );
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        for &(a, b) in pts {
            s += &format!(
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{c}\" fill-opacity=\"0.8\"/>\n",
                x(a),
                y(b)
            );
        }
        let ly = top + 10.0 + i as f64 * 22.0;
        s += &format!(
            "<circle cx=\"{:.1}\" cy=\"{ly:.1}\" r=\"5\" fill=\"{c}\"/>\n",
            left + pw + 30.0
        );
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            left + pw + 42.0,
            ly + 4.0,
            esc(name)
        );
    }
    s += "</svg>\n";
    s
}
