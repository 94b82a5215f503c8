// The results explorer's script (tsbench.explorer.page inlines it into explorer.html). It reads
// the data explorer-data.js sets (window[<body data-variable>], format tsbench-explorer/1: runs
// oldest first; series with runs[i] = position of values[i]'s run, and changes), then redraws
// the bars, the trend chart, the changes and the runs table on every change of the controls.
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22"];
  var CHART = { width: 960, height: 340, left: 86, right: 24, top: 28, bottom: 56 };
  var data = window[document.body.dataset.variable];
  var unticked = {};  // databases the user unticked, kept across redraws
  var colour = {};

  function $(id) { return document.getElementById(id); }

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function svg(tag, attributes, text) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function unique(values) {
    var seen = [];
    values.forEach(function (v) { if (seen.indexOf(v) < 0) { seen.push(v); } });
    return seen;
  }

  function median(values) {
    var sorted = values.slice().sort(function (a, b) { return a - b; });
    var middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  }

  // -- numbers and dates ------------------------------------------------------------------
  function number(value) {
    if (Math.abs(value) >= 1000) { return Math.round(value).toLocaleString("en-US"); }
    return Number(value.toPrecision(3)).toString();
  }

  function withUnit(value, unit) {
    if (unit === "bytes") {
      var units = ["B", "KiB", "MiB", "GiB", "TiB"];
      var i = 0;
      while (Math.abs(value) >= 1024 && i < units.length - 1) { value /= 1024; i += 1; }
      return Number(value.toPrecision(3)) + " " + units[i];
    }
    return number(value) + " " + unit;
  }

  function compact(value, unit) {
    if (unit === "bytes") { return withUnit(value, unit); }
    var steps = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < steps.length; i += 1) {
      if (Math.abs(value) >= steps[i][0]) { return Number((value / steps[i][0]).toPrecision(3)) + steps[i][1]; }
    }
    return Number(value.toPrecision(3)).toString();
  }

  function when(run) { return (run.created_at || "").slice(0, 16).replace("T", " "); }

  function runText(position) {
    var run = data.runs[position];
    return run.run_id + " (" + when(run) + ")";
  }

  // -- the controls ---------------------------------------------------------------------------
  function fill(select, options, fallback) {
    var keep = select.value;
    select.textContent = "";
    options.forEach(function (o) { select.appendChild(element("option", { value: o.value }, o.text)); });
    var values = options.map(function (o) { return o.value; });
    select.value = values.indexOf(keep) >= 0 ? keep : (fallback !== undefined ? fallback : values[0]);
    return select.value;
  }

  function choose(list, field, id, label) {
    var values = unique(list.map(function (s) { return String(s[field]); }));
    if (field === "scale") { values.sort(function (a, b) { return Number(a) - Number(b); }); }
    var picked = fill($(id), values.map(function (v) { return { value: v, text: label(v) }; }));
    return { picked: picked, count: values.length, rest: list.filter(function (s) { return String(s[field]) === picked; }) };
  }

  function betterText(s) { return s.better === "higher" ? "higher is better" : "lower is better"; }

  function pickSeries() {
    var origin = choose(data.series, "origin", "origin", function (v) { return v || "nightly and ad-hoc runs"; });
    $("origin-field").hidden = origin.count < 2;
    var useCase = choose(origin.rest, "use_case", "use-case", function (v) { return v; });
    var scale = choose(useCase.rest, "scale", "scale", function (v) { return v === "null" ? "–" : v; });
    var point = choose(scale.rest, "point", "point", function (v) { return v || "the comparison"; });
    $("point-field").hidden = point.count < 2;
    var metrics = unique(point.rest.map(function (s) { return s.metric; }));
    var labels = {};
    point.rest.forEach(function (s) { labels[s.metric] = s.metric + " (" + s.unit + ", " + betterText(s) + ")"; });
    fill($("metric"), metrics.map(function (m) { return { value: m, text: labels[m] }; }));
    var chosen = point.rest.filter(function (s) { return s.metric === $("metric").value; });
    return { all: point.rest, chosen: chosen };
  }

  function pickTargets(chosen) {
    var box = $("targets");
    Array.prototype.slice.call(box.querySelectorAll("label")).forEach(function (l) { box.removeChild(l); });
    var names = unique(chosen.map(function (s) { return s.target; })).sort();
    names.forEach(function (name) {
      var input = element("input", { type: "checkbox", value: name, name: "target" });
      input.checked = !unticked[name];
      input.addEventListener("change", function () { unticked[name] = !input.checked; redraw(); });
      var label = element("label", { "data-target": name });
      label.appendChild(input);
      label.appendChild(element("span", { class: "swatch", style: "background:" + colour[name] }));
      label.appendChild(document.createTextNode(name));
      box.appendChild(label);
    });
    return chosen.filter(function (s) { return !unticked[s.target]; });
  }

  function pickRange(all) {
    var positions = [];
    all.forEach(function (s) { s.runs.forEach(function (p) { if (positions.indexOf(p) < 0) { positions.push(p); } }); });
    positions.sort(function (a, b) { return a - b; });
    var options = positions.map(function (p) {
      var run = data.runs[p];
      var failed = run.verdict === "failed" ? " — validation failed" : "";
      return { value: String(p), text: when(run) + " · " + run.run_id + failed };
    });
    var from = Number(fill($("from"), options, options.length ? options[0].value : undefined));
    var to = Number(fill($("to"), options, options.length ? options[options.length - 1].value : undefined));
    if (from > to) { to = from; $("to").value = String(to); }
    return positions.filter(function (p) { return p >= from && p <= to; });
  }

  // -- the bars -------------------------------------------------------------------------------
  function inRange(s, range) {
    var points = [];
    s.runs.forEach(function (p, i) {
      if (range.indexOf(p) >= 0) { points.push({ position: p, value: s.values[i], valid: data.runs[p].verdict !== "failed" }); }
    });
    return points;
  }

  // One bar's figure: the median of the validated values in the range, or the newest of them.
  function barFigure(s, range, newest) {
    var points = inRange(s, range).filter(function (p) { return p.valid; });
    if (!points.length) { return { s: s, value: null }; }
    if (newest) {
      var last = points[points.length - 1];
      return { s: s, value: last.value, what: "run " + data.runs[last.position].run_id };
    }
    var n = points.length;
    return { s: s, value: median(points.map(function (p) { return p.value; })), what: "median of " + n + " run" + (n === 1 ? "" : "s") };
  }

  function drawBars(shown, range) {
    var bars = $("bars");
    bars.textContent = "";
    if (!shown.length) { bars.appendChild(element("p", { class: "note" }, "No database ticked.")); return; }
    var newest = $("statistic").value === "newest";
    var rows = shown.map(function (s) { return barFigure(s, range, newest); });
    var measured = rows.filter(function (r) { return r.value !== null; }).map(function (r) { return r.value; });
    var higher = shown[0].better === "higher";
    var best = higher ? Math.max.apply(null, measured) : Math.min.apply(null, measured);
    rows.forEach(function (r) { r.ratio = r.value === null ? null : (higher ? best / r.value : r.value / best); });
    rows.sort(function (a, b) { return (a.ratio === null) - (b.ratio === null) || a.ratio - b.ratio; });
    var worst = Math.max.apply(null, rows.map(function (r) { return r.ratio || 1; }));
    rows.forEach(function (r) { bars.appendChild(barRow(r, worst)); });
    $("bars-note").textContent = "Each bar: the database's " + (newest ? "newest " : "median ") + shown[0].metric +
      (newest ? " among" : " over") + " the validated runs in the range (runs whose validation failed are left out). " +
      "×1.00 is the best; ×N is N times worse than the best (" + (higher ? "best ÷ value: " : "value ÷ best: ") +
      betterText(shown[0]) + "). A longer bar is worse.";
  }

  function barRow(row, worst) {
    var best = row.ratio !== null && row.ratio <= 1.0000001;
    var div = element("div", { class: "bar-row" + (best ? " best" : "") + (row.ratio === null ? " missing" : ""), "data-target": row.s.target });
    div.appendChild(element("span", { class: "bar-name" }, row.s.target));
    var track = element("div", { class: "bar-track" });
    if (row.ratio !== null) {
      var width = Math.max(1, 100 * row.ratio / worst).toFixed(1);
      track.appendChild(element("div", { class: "bar", style: "width:" + width + "%;background:" + colour[row.s.target] }));
    }
    div.appendChild(track);
    var label = element("span", { class: "bar-label" });
    if (row.ratio === null) {
      label.textContent = "no validated value in the range";
    } else {
      label.appendChild(element("span", { class: "ratio" }, "×" + row.ratio.toFixed(2) + (best ? " best" : "")));
      label.appendChild(document.createTextNode(" · " + withUnit(row.value, row.s.unit) + " · " + row.what));
    }
    div.appendChild(label);
    return div;
  }

  // -- the trend chart ----------------------------------------------------------------------------
  function scaleOf(shown, range, unit) {
    var values = [];
    shown.forEach(function (s) { inRange(s, range).forEach(function (p) { values.push(p.value); }); });
    var top = (values.length ? Math.max.apply(null, values) : 1) || 1;
    var base = unit === "bytes" ? Math.pow(1024, Math.max(0, Math.floor(Math.log(top) / Math.log(1024)))) : 1;
    var step = Math.pow(10, Math.floor(Math.log10(top / base)));
    var nice = base * ([1, 2, 2.5, 5, 10].map(function (m) { return m * step; }).filter(function (v) { return v * base >= top; })[0] || top / base);
    var plotW = CHART.width - CHART.left - CHART.right;
    var plotH = CHART.height - CHART.top - CHART.bottom;
    return {
      top: nice,
      x: function (p) { return CHART.left + (range.indexOf(p) + 0.5) * plotW / Math.max(range.length, 1); },
      y: function (v) { return CHART.top + plotH * (1 - v / nice); }
    };
  }

  function drawAxes(chart, at, unit, range) {
    var bottom = CHART.height - CHART.bottom;
    for (var i = 0; i <= 4; i += 1) {
      var v = at.top * i / 4;
      var y = at.y(v);
      chart.appendChild(svg("line", { class: "grid", x1: CHART.left, x2: CHART.width - CHART.right, y1: y, y2: y }));
      chart.appendChild(svg("text", { class: "tick", x: CHART.left - 6, y: y + 4, "text-anchor": "end" }, compact(v, unit)));
    }
    chart.appendChild(svg("line", { class: "axis", x1: CHART.left, x2: CHART.width - CHART.right, y1: bottom, y2: bottom }));
    var every = Math.max(1, Math.ceil(range.length / 10));
    var days = range.map(function (p) { return (data.runs[p].created_at || "").slice(0, 10); });
    var sameDay = unique(days).length < days.length;  // then label the time too: "12-01 19:35"
    range.forEach(function (p, i) {
      if (i % every) { return; }
      var label = sameDay ? when(data.runs[p]).slice(5) : days[i];
      chart.appendChild(svg("text", { class: "tick", x: at.x(p), y: bottom + 16, "text-anchor": "middle" }, label));
    });
    chart.appendChild(svg("text", { class: "tick", x: CHART.left + 4, y: CHART.top - 10 }, unit));
    chart.appendChild(svg("text", { class: "tick", x: (CHART.left + CHART.width) / 2, y: bottom + 38, "text-anchor": "middle" },
      "runs in the range, oldest first (creation date, UTC)"));
  }

  function drawLine(chart, s, at, range) {
    var points = inRange(s, range);
    var valid = points.filter(function (p) { return p.valid; });
    var line = svg("polyline", { class: "line", "data-target": s.target, stroke: colour[s.target],
      points: valid.map(function (p) { return at.x(p.position).toFixed(1) + "," + at.y(p.value).toFixed(1); }).join(" ") });
    chart.appendChild(line);
    points.forEach(function (p) {
      var x = at.x(p.position);
      var y = at.y(p.value);
      var title = s.target + " · " + runText(p.position) + " · " + withUnit(p.value, s.unit);
      var mark = p.valid
        ? svg("circle", { class: "dot", cx: x, cy: y, r: 3.5, fill: colour[s.target] })
        : svg("path", { class: "failed", d: "M" + (x - 5) + "," + (y - 5) + "l10,10m0,-10l-10,10", stroke: colour[s.target] });
      mark.appendChild(svg("title", {}, p.valid ? title : title + " · validation failed: not counted"));
      chart.appendChild(mark);
    });
  }

  function changesIn(shown, range) {
    var found = [];
    shown.forEach(function (s) {
      s.changes.forEach(function (c) {
        if (range.indexOf(c.before) >= 0 && range.indexOf(c.after) >= 0) { found.push({ s: s, c: c }); }
      });
    });
    found.sort(function (a, b) { return a.c.after - b.c.after || (a.s.target < b.s.target ? -1 : 1); });
    return found;
  }

  function changeText(s, c) {
    var p = c.pvalue === null ? "" : ", p = " + (c.pvalue < 0.001 ? c.pvalue.toExponential(1) : c.pvalue.toFixed(3));
    var changed = c.differences.length ? c.differences.join("; ") : "nothing recorded changed";
    return s.target + " " + s.metric + ": " + c.verdict + " " + c.interval + p + "; mean " +
      withUnit(c.mean_before, s.unit) + " over " + c.runs_before + " run(s) → " + withUnit(c.mean_after, s.unit) +
      " over " + c.runs_after + "; last run before: " + runText(c.before) + ", first run after: " + runText(c.after) +
      "; changed: " + changed;
  }

  function drawChanges(chart, found, at) {
    found.forEach(function (f, i) {
      var x = (at.x(f.c.before) + at.x(f.c.after)) / 2;
      var marker = svg("line", { class: "change", "data-target": f.s.target, x1: x, x2: x, y1: CHART.top,
        y2: CHART.height - CHART.bottom, stroke: colour[f.s.target], "stroke-dasharray": "6 4" });
      marker.appendChild(svg("title", {}, (i + 1) + ". " + changeText(f.s, f.c)));
      chart.appendChild(marker);
      chart.appendChild(svg("text", { class: "change-label", x: x + 3, y: CHART.top + 12 + 14 * (i % 3), fill: colour[f.s.target] }, String(i + 1)));
    });
  }

  function listChanges(found) {
    var list = $("changes");
    list.textContent = "";
    found.forEach(function (f) {
      var item = element("li", { "data-target": f.s.target });
      item.appendChild(element("span", { class: "swatch", style: "background:" + colour[f.s.target] }));
      var text = changeText(f.s, f.c);
      var verdictAt = text.indexOf(f.c.verdict);
      item.appendChild(document.createTextNode(text.slice(0, verdictAt)));
      item.appendChild(element("span", { class: f.c.verdict }, f.c.verdict));
      item.appendChild(element("span", { class: "what" }, text.slice(verdictAt + f.c.verdict.length)));
      list.appendChild(item);
    });
    $("changes-note").textContent = found.length
      ? "Changes whose runs on both sides are in the range, numbered as on the chart (dashed lines). Detector: " + data.detector + "."
      : "No change detected between runs of the range for the ticked databases. Detector: " + data.detector + ".";
  }

  function drawTrend(shown, range) {
    var holder = $("trend");
    holder.textContent = "";
    var legend = $("legend");
    legend.textContent = "";
    var at = scaleOf(shown, range, shown.length ? shown[0].unit : "");
    var chart = svg("svg", { viewBox: "0 0 " + CHART.width + " " + CHART.height, role: "img",
      "aria-label": "trend of " + (shown.length ? shown[0].metric : "nothing") });
    drawAxes(chart, at, shown.length ? shown[0].unit : "", range);
    shown.forEach(function (s) {
      drawLine(chart, s, at, range);
      var item = element("span", { class: "item" });
      item.appendChild(element("span", { class: "swatch", style: "background:" + colour[s.target] }));
      item.appendChild(document.createTextNode(s.target));
      legend.appendChild(item);
    });
    var found = changesIn(shown, range);
    drawChanges(chart, found, at);
    holder.appendChild(chart);
    listChanges(found);
    $("trend-note").textContent = "One line per ticked database over the " + range.length + " run(s) in the range; " +
      "× marks a run whose validation failed (shown, not counted); dashed lines mark detected changes (hover for details).";
  }

  // -- the runs table ------------------------------------------------------------------------------
  function drawRuns(shown, range) {
    var head = $("runs").tHead;
    var body = $("runs").tBodies[0];
    head.textContent = "";
    body.textContent = "";
    var titles = ["Run", "Created (UTC)", "Validation"].concat(shown.map(function (s) { return s.target + " (" + s.unit + ")"; }), ["Report"]);
    var row = element("tr");
    titles.forEach(function (t) { row.appendChild(element("th", {}, t)); });
    head.appendChild(row);
    range.slice().reverse().forEach(function (p) { body.appendChild(runRow(p, shown)); });
  }

  function runRow(position, shown) {
    var run = data.runs[position];
    var row = element("tr", { class: run.verdict === "failed" ? "failed" : "", "data-run": run.run_id });
    row.appendChild(element("td", {}, run.run_id));
    row.appendChild(element("td", {}, when(run)));
    var css = run.verdict === "failed" ? "bad" : (run.verdict === "passed" ? "good" : "");
    row.appendChild(element("td", { class: css }, run.verdict));
    shown.forEach(function (s) {
      var i = s.runs.indexOf(position);
      row.appendChild(element("td", { class: "num" }, i < 0 ? "–" : withUnit(s.values[i], s.unit)));
    });
    var cell = element("td");
    if (run.report) { cell.appendChild(element("a", { href: run.report, class: "report" }, "report")); } else { cell.textContent = "no report"; }
    row.appendChild(cell);
    return row;
  }

  // -- wiring -----------------------------------------------------------------------------------------
  function redraw() {
    var picked = pickSeries();
    var shown = pickTargets(picked.chosen);
    var range = pickRange(picked.all);
    drawBars(shown, range);
    drawTrend(shown, range);
    drawRuns(shown, range);
  }

  function problem(text) {
    $("problem").textContent = text;
    $("problem").hidden = false;
    $("summary").textContent = "";
  }

  function start() {
    if (!data) { problem("No data: explorer-data.js is missing beside this page or did not load (publish a run to write it)."); return; }
    if (data.format !== document.body.dataset.format) { problem("explorer-data.js is of format " + data.format + ", this page reads " + document.body.dataset.format + ": publish a run again."); return; }
    if (!data.series.length) { problem("No run with comparable figures has been published yet."); return; }
    unique(data.series.map(function (s) { return s.target; })).sort().forEach(function (t, i) { colour[t] = PALETTE[i % PALETTE.length]; });
    $("summary").textContent = data.runs.length + " run(s), " + data.series.length + " series";
    ["origin", "use-case", "scale", "point", "metric", "statistic", "from", "to"].forEach(function (id) { $(id).addEventListener("change", redraw); });
    redraw();
  }

  start();
}());
