(function () {
  "use strict";
  var form = document.getElementById("filters");
  var fields = {};
  ["q", "kind", "namespace", "status"].forEach(function (id) { fields[id] = document.getElementById(id); });
  var rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
  var shown = document.getElementById("shown");
  var total = { policy: 0, path: 0 };
  rows.forEach(function (r) { total[r.dataset.row]++; });

  // The filters come from the URL: #kind=ColorPolicy&namespace=app&status=Enforced&q=blue
  // (or the same as a query string), so a link or a test can open the page filtered.
  function fromURL() {
    var raw = location.hash.replace(/^#/, "") || location.search.replace(/^\?/, "");
    var params = new URLSearchParams(raw);
    Object.keys(fields).forEach(function (name) {
      var field = fields[name], value = params.get(name) || "";
      if (field.tagName === "SELECT" && !Array.prototype.some.call(field.options, function (o) { return o.value === value; })) {
        value = "";
      }
      field.value = value;
    });
  }

  function toURL() {
    var params = new URLSearchParams();
    Object.keys(fields).forEach(function (name) {
      if (fields[name].value) { params.set(name, fields[name].value); }
    });
    try { history.replaceState(null, "", "#" + params.toString()); } catch (e) { /* file: URLs may refuse */ }
  }

  function apply() {
    var q = fields.q.value.trim().toLowerCase(), kind = fields.kind.value;
    var ns = fields.namespace.value, status = fields.status.value;
    var count = { policy: 0, path: 0 };
    rows.forEach(function (r) {
      var ok = (!kind || r.dataset.kind === kind) &&
        (!ns || (" " + r.dataset.namespaces + " ").indexOf(" " + ns + " ") >= 0) &&
        (!status || r.dataset.row !== "policy" || r.dataset.status === status) &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) { count[r.dataset.row]++; }
    });
    document.querySelectorAll("[data-empty]").forEach(function (e) { e.hidden = count[e.dataset.empty] > 0; });
    shown.dataset.policies = count.policy;
    shown.dataset.paths = count.path;
    shown.textContent = count.policy + " of " + total.policy + " policies, " + count.path + " of " + total.path + " paths";
    document.body.dataset.filtered = (q || kind || ns || status) ? "true" : "false";
  }

  form.addEventListener("input", function () { apply(); toURL(); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  window.addEventListener("hashchange", function () { fromURL(); apply(); });
  fromURL();
  apply();
})();
