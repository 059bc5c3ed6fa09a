(function () {
  "use strict";
  var form = document.getElementById("filters");
  var fields = {};
  ["q", "kind", "namespace", "status"].forEach(function (id) { fields[id] = document.getElementById(id); });
  var rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
  var shown = document.getElementById("shown");
  var total = { policy: 0, path: 0 };
  rows.forEach(function (r) { total[r.dataset.row]++; });

  // The picture: every SVG element on some paths lists them (data-paths), so highlighting
  // a policy's or a path's reach and hiding what the filters leave out are set lookups.
  var picture = document.getElementById("picture");
  var groups = Array.prototype.slice.call(picture.querySelectorAll("details.group"));
  var marked = Array.prototype.slice.call(picture.querySelectorAll("svg [data-paths]"));
  var panel = document.getElementById("selection"), selected = document.getElementById("selected");
  var selection = { policy: "", path: "" };

  function list(s) { return s ? s.split(" ") : []; }
  function setOf(items) { var s = {}; items.forEach(function (i) { s[i] = true; }); return s; }
  function touches(el, set) { return list(el.dataset.paths).some(function (p) { return set[p]; }); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text) { e.textContent = text; }
    if (cls) { e.className = cls; }
    return e;
  }
  function pathArticle(i) { return document.getElementById("path-" + i); }
  function policyRow(i) { return document.querySelector('tr[data-policy="' + i + '"]'); }

  // The filters (and the selection) come from the URL:
  // #kind=ColorPolicy&namespace=app&status=Enforced&q=blue&policy=3 (or the same as a query
  // string), so a link or a test can open the page filtered. A plain anchor (#path-3) is a
  // jump to a table and changes nothing.
  function fromURL() {
    var raw = location.hash.replace(/^#/, "") || location.search.replace(/^\?/, "");
    if (raw && raw.indexOf("=") < 0) { return false; }
    var params = new URLSearchParams(raw);
    Object.keys(fields).forEach(function (name) {
      var field = fields[name], value = params.get(name) || "";
      if (field.tagName === "SELECT" && !Array.prototype.some.call(field.options, function (o) { return o.value === value; })) {
        value = "";
      }
      field.value = value;
    });
    selection.policy = policyRow(params.get("policy")) ? params.get("policy") : "";
    selection.path = pathArticle(params.get("path")) ? params.get("path") : "";
    return true;
  }

  function toURL() {
    var params = new URLSearchParams();
    Object.keys(fields).forEach(function (name) {
      if (fields[name].value) { params.set(name, fields[name].value); }
    });
    ["policy", "path"].forEach(function (name) { if (selection[name]) { params.set(name, selection[name]); } });
    try { history.replaceState(null, "", "#" + params.toString()); } catch (e) { /* file: URLs may refuse */ }
  }

  function apply() {
    var q = fields.q.value.trim().toLowerCase(), kind = fields.kind.value;
    var ns = fields.namespace.value, status = fields.status.value;
    var count = { policy: 0, path: 0 }, visible = {};
    rows.forEach(function (r) {
      var ok = (!kind || r.dataset.kind === kind) &&
        (!ns || (" " + r.dataset.namespaces + " ").indexOf(" " + ns + " ") >= 0) &&
        (!status || r.dataset.row !== "policy" || r.dataset.status === status) &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) { count[r.dataset.row]++; }
      if (ok && r.dataset.row === "path") { visible[r.dataset.path] = true; }
    });
    var filtered = !!(q || kind || ns || status);
    // The picture narrows with the paths: a group none of whose paths is shown is hidden,
    // the objects on no shown path fade, and the groups that match open (up to eight).
    var opened = 0;
    groups.forEach(function (g) {
      var any = !filtered || touches(g, visible);
      g.hidden = !any;
      if (filtered && any && opened < 8) { g.open = true; opened++; }
    });
    marked.forEach(function (m) { m.classList.toggle("out", filtered && !touches(m, visible)); });
    document.querySelectorAll("[data-empty]").forEach(function (e) { e.hidden = count[e.dataset.empty] > 0; });
    shown.dataset.policies = count.policy;
    shown.dataset.paths = count.path;
    shown.textContent = count.policy + " of " + total.policy + " policies, " + count.path + " of " + total.path + " paths";
    document.body.dataset.filtered = filtered ? "true" : "false";
  }

  function mark(paths, cls) {
    var set = setOf(paths);
    marked.forEach(function (m) { if (touches(m, set)) { m.classList.add(cls); } });
    groups.forEach(function (g) { if (touches(g, set)) { g.open = true; } });
  }

  function pathLinks(title, paths, cls) {
    var box = el("div", "", cls);
    box.appendChild(el("span", title + " (" + paths.length + ")"));
    var ul = el("ul");
    // The first few as links to their tables; the picture highlights them all.
    paths.slice(0, 8).forEach(function (i) {
      var li = el("li"), a = el("a", pathArticle(i).dataset.id);
      a.href = "#path-" + i;
      li.appendChild(a);
      ul.appendChild(li);
    });
    if (paths.length > 8) { ul.appendChild(el("li", "and " + (paths.length - 8) + " more, highlighted below")); }
    box.appendChild(ul);
    return box;
  }

  // select shows what is selected: a policy's paths (where it wins, where it is
  // overridden), or a path's objects and its effective settings (the table below, copied).
  function select() {
    marked.forEach(function (m) { m.classList.remove("on", "win", "lose"); });
    picture.querySelectorAll(".sel").forEach(function (e) { e.classList.remove("sel"); });
    document.querySelectorAll("tr.sel, article.sel").forEach(function (e) { e.classList.remove("sel"); });
    selected.textContent = "";
    var any = selection.policy || selection.path;
    picture.classList.toggle("selecting", !!any);
    picture.dataset.selected = selection.policy ? "policy " + selection.policy : selection.path ? "path " + selection.path : "";
    panel.hidden = !any;
    if (selection.policy) {
      var row = policyRow(selection.policy), wins = list(row.dataset.wins), loses = list(row.dataset.loses);
      mark(loses, "lose");
      mark(wins, "win");
      row.classList.add("sel");
      picture.querySelectorAll('.badge[data-policy="' + selection.policy + '"]').forEach(function (b) { b.classList.add("sel"); });
      var h = el("h4", row.dataset.id);
      h.appendChild(el("span", row.dataset.status, "badge " + row.querySelector(".badge").className.replace("badge ", "")));
      selected.appendChild(h);
      if (!wins.length && !loses.length) { selected.appendChild(el("p", "It attaches on no path shown.")); }
      if (wins.length) { selected.appendChild(pathLinks("Supplies a setting on", wins, "win")); }
      if (loses.length) { selected.appendChild(pathLinks("Attaches, and is overridden on", loses, "lose")); }
    } else if (selection.path) {
      var article = pathArticle(selection.path);
      mark([selection.path], "on");
      article.classList.add("sel");
      selected.appendChild(el("h4", article.dataset.id));
      selected.appendChild(article.querySelector("table.stack").cloneNode(true));
      var jump = el("a", "its table below");
      jump.href = "#path-" + selection.path;
      selected.appendChild(jump);
    }
  }

  function choose(kind, value) {
    selection = { policy: "", path: "" };
    selection[kind] = value;
    select();
    toURL();
  }

  picture.addEventListener("click", function (e) {
    var badge = e.target.closest("[data-policy]"), entry = e.target.closest("a.entry");
    if (badge) { choose("policy", badge.dataset.policy); } else if (entry) {
      e.preventDefault();
      choose("path", entry.dataset.path);
    }
  });
  picture.addEventListener("keydown", function (e) {
    var badge = e.target.closest && e.target.closest("[data-policy]");
    if (badge && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); choose("policy", badge.dataset.policy); }
  });
  document.getElementById("clear").addEventListener("click", function () { choose("policy", ""); });
  document.getElementById("unfold").addEventListener("click", function () { groups.forEach(function (g) { g.open = true; }); });
  document.getElementById("fold").addEventListener("click", function () { groups.forEach(function (g) { g.open = false; }); });
  document.getElementById("policies").addEventListener("click", function (e) {
    var row = e.target.closest("tr[data-policy]");
    if (row) { choose("policy", row.dataset.policy); picture.scrollIntoView(); }
  });
  document.getElementById("paths").addEventListener("click", function (e) {
    var h = e.target.closest("article.path h3");
    if (h) { choose("path", h.parentNode.dataset.path); picture.scrollIntoView(); }
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") { choose("policy", ""); } });

  form.addEventListener("input", function () { apply(); toURL(); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  window.addEventListener("hashchange", function () { if (fromURL()) { apply(); select(); } });
  fromURL();
  apply();
  select();
})();
