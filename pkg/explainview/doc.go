// Package explainview draws `webhook explain` as pictures: one self-contained HTML page
// (the hierarchy of Gateways, listeners, routes, rules and backends drawn as inline SVG, each
// policy a badge on the point it attaches at coloured by its impact status, each path's
// winners beside it; the effective policy stack of every path, with search and filters),
// and Graphviz DOT and Mermaid (the same hierarchy, each policy beside the point it attaches
// at, its edges marked defaults or overrides). Layout places the page's boxes in fixed
// columns by level (a layered layout needs no graph library); DOT and Mermaid take its order
// and columns, so the three agree.
//
// Renderers are pure functions from the explain model (impact.Explanation) to bytes. The
// HTML page shows exactly what `explain -o json` shows and nothing more: every name, value
// and status on it comes from the Explanation, escaped by html/template (the SVG's text by
// html.EscapeString), and its Content-Security-Policy lets only its own inline style and
// script run (nothing is loaded from the network). The pictures add, from the snapshot, where each shown policy attaches
// on the shown paths and with which stanza (Attachments): facts of the policy's own spec,
// never a setting's value.
//
// It imports the pure rule packages only (no HTTP, no client-go): cmd/webhook wires it to
// `explain -o dot|mermaid|html`.
package explainview
