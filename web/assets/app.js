// gpucalc serve: sends the form to the server and shows its answer. Every
// number comes from the server (the same Go code as the CLI); this script
// only moves inputs and answers between the page, the URL and the API.
"use strict";
(function () {
  const form = document.getElementById("form");
  if (!form) return;
  const api = form.dataset.api;
  let seq = 0;
  let pending = null;
  // The server answers its API only with this header, which no page of
  // another site can send it (see docs/serve.md, Safety).
  const headers = { "X-Gpucalc-Request": "1" };

  // params serializes the form; a fieldset with data-join sends its checked
  // boxes as one comma-separated value.
  function params() {
    const p = new URLSearchParams();
    for (const el of form.elements) {
      if (!el.name || el.disabled || el.type === "file") continue;
      if ((el.type === "radio" || el.type === "checkbox") && !el.checked) continue;
      p.append(el.name, el.value);
    }
    for (const fs of form.querySelectorAll("fieldset[data-join]")) {
      const v = [...fs.querySelectorAll("input:checked")].map((i) => i.value);
      p.set(fs.dataset.join, v.join(","));
    }
    return p;
  }

  function showErrors(errors) {
    for (const el of document.querySelectorAll("[data-error-for]")) {
      const msg = errors && errors[el.dataset.errorFor];
      el.textContent = msg || "";
      el.hidden = !msg;
      const field = document.getElementById(el.dataset.errorFor);
      if (field) field.toggleAttribute("aria-invalid", !!msg);
    }
  }

  function renderTable(t) {
    const sec = document.createElement("section");
    sec.className = "table";
    const tab = document.createElement("table");
    const cap = document.createElement("caption");
    cap.textContent = t.title;
    tab.appendChild(cap);
    const head = tab.createTHead().insertRow();
    for (const h of t.header) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = h;
      head.appendChild(th);
    }
    const body = tab.createTBody();
    for (const r of t.rows) {
      const tr = body.insertRow();
      tr.dataset.key = r[0];
      r.forEach((c, i) => {
        const td = tr.insertCell();
        td.textContent = c;
        if (i > 0 && /^[-+~≈<>≤≥ ]*[0-9.]/.test(c)) td.className = "num";
      });
    }
    sec.appendChild(tab);
    if (t.notes && t.notes.length) {
      const ul = document.createElement("ul");
      ul.className = "notes";
      for (const n of t.notes) {
        const li = document.createElement("li");
        li.textContent = n;
        ul.appendChild(li);
      }
      sec.appendChild(ul);
    }
    return sec;
  }

  function render(a) {
    showErrors(a.errors);
    document.getElementById("cli").textContent = a.cli || "";
    if (a.errors) return; // keep the last good answer beside the errors
    const charts = document.getElementById("charts");
    charts.replaceChildren(...(a.charts || []).map((c) => {
      const fig = document.createElement("figure");
      fig.id = "chart-" + c.id;
      fig.setAttribute("aria-label", c.title);
      fig.innerHTML = c.svg; // gonum/plot's SVG, text escaped by it
      return fig;
    }));
    // A page with a #summary place shows the first table there.
    const tables = (a.tables || []).map(renderTable);
    const summary = document.getElementById("summary");
    if (summary) summary.replaceChildren(...tables.splice(0, 1));
    document.getElementById("tables").replaceChildren(...tables);
    const frame = document.getElementById("report");
    frame.hidden = !a.html;
    if (a.html) frame.srcdoc = a.html;
  }

  // update asks the API and repaints; t0 is when the input happened. The
  // time from input to the frame that paints the answer is kept in
  // body[data-repaint-ms], for the browser test.
  async function update(t0, init) {
    const id = ++seq;
    if (pending) pending.abort();
    pending = new AbortController();
    let res;
    try {
      if (form.dataset.upload !== undefined) {
        const file = form.elements.file;
        if (file.files.length) {
          const body = new FormData();
          body.append("file", file.files[0]);
          body.append("device", form.elements.device.value);
          res = await fetch(api, { method: "POST", body: body, headers: headers, signal: pending.signal });
        } else if (form.elements.example.value) {
          const p = new URLSearchParams({ example: form.elements.example.value, device: form.elements.device.value });
          history.replaceState(null, "", location.pathname + "?" + p);
          res = await fetch(api + "?" + p, { headers: headers, signal: pending.signal });
        } else {
          if (!init) showErrors({ file: "choose or drop a file, or pick an example" });
          return;
        }
      } else {
        const p = params();
        history.replaceState(null, "", location.pathname + "?" + p);
        res = await fetch(api + "?" + p, { headers: headers, signal: pending.signal });
      }
      const a = await res.json();
      if (id !== seq) return;
      render(a);
    } catch (e) {
      if (e.name === "AbortError") return;
      if (id === seq) showErrors({ "": "No answer from gpucalc serve: " + e.message });
      return;
    }
    requestAnimationFrame(() => {
      document.body.dataset.repaintMs = (performance.now() - t0).toFixed(1);
      document.body.dataset.answers = String(id);
    });
  }

  if (form.dataset.live !== undefined) {
    form.addEventListener("input", (e) => {
      const src = e.target.closest("[name=ops],[name=example],[name=workload]");
      if (src && form.elements.source) form.elements.source.value = src.name === "ops" ? "ops" : src.name;
      update(performance.now());
    });
  }
  if (form.dataset.upload !== undefined) {
    form.addEventListener("submit", (e) => { e.preventDefault(); update(performance.now()); });
    form.elements.file.addEventListener("change", () => update(performance.now()));
    form.elements.example.addEventListener("change", () => { form.elements.file.value = ""; update(performance.now()); });
    form.elements.device.addEventListener("change", () => update(performance.now()));
    const drop = document.getElementById("drop");
    drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (e) => {
      e.preventDefault();
      drop.classList.remove("over");
      form.elements.file.files = e.dataTransfer.files;
      update(performance.now());
    });
  }
  form.addEventListener("submit", (e) => e.preventDefault());

  document.getElementById("copy-cli").addEventListener("click", async () => {
    const text = document.getElementById("cli").textContent;
    const status = document.getElementById("copied");
    try {
      await navigator.clipboard.writeText(text);
      status.textContent = "copied";
    } catch (e) {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById("cli"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      status.textContent = "selected: press Ctrl+C";
    }
  });

  update(performance.now(), true);
})();
