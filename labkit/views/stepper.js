// Glossary links (labkit/views/glossary.py: <a class="labkit-term" data-term="KEY">) open the
// glossary and scroll to the term's entry. One capturing listener per page, installed by the
// first stepper shown: it sees clicks in the prose and inside step cards (a shadow DOM in
// marimo, which a plain #fragment link cannot leave), and finds the entry wherever it lives.
function findEntry(root, id) {
  const hit = root.getElementById(id);
  if (hit) return hit;
  for (const node of root.querySelectorAll("*")) {
    const inner = node.shadowRoot && findEntry(node.shadowRoot, id);
    if (inner) return inner;
  }
  return null;
}
function openTerm(event) {
  const link = event.composedPath().find((n) => n instanceof Element && n.matches("a.labkit-term"));
  const entry = link && findEntry(document, `labkit-glossary-${link.dataset.term}`);
  if (!entry) return; // no glossary on this page: the link's own href and tooltip remain
  event.preventDefault();
  event.stopPropagation();
  const box = entry.closest("details");
  if (box) box.open = true;
  entry.scrollIntoView({ block: "center" });
  entry.style.background = "#fff3b0";
  setTimeout(() => { entry.style.background = ""; }, 2500);
}
if (!globalThis.__labkitGlossaryLinks) {
  globalThis.__labkitGlossaryLinks = true;
  document.addEventListener("click", openTerm, true);
}

// A round stepper: previous / next buttons, a slider and the arrow keys choose which
// round to SHOW. It only moves `index`; the loop was computed once, in Python.
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "labkit-stepper";
  root.tabIndex = 0;
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "round stepper");
  const prev = document.createElement("button");
  prev.textContent = "◀ previous";
  prev.className = "labkit-prev";
  const next = document.createElement("button");
  next.textContent = "next ▶";
  next.className = "labkit-next";
  const slider = document.createElement("input");
  slider.type = "range";
  slider.min = "0";
  slider.step = "1";
  slider.className = "labkit-slider";
  const label = document.createElement("span");
  label.className = "labkit-label";
  label.setAttribute("aria-live", "polite");
  root.append(prev, slider, next, label);
  // Optional precomputed pages (HTML), one per item: shown here, in the browser, with no
  // round trip to Python — stepping is instant and can never recompute anything.
  const page = document.createElement("div");
  page.className = "labkit-page";
  el.append(root, page);

  const go = (i) => {
    const n = model.get("count");
    const j = Math.max(0, Math.min(n - 1, i));
    if (j !== model.get("index")) {
      model.set("index", j);
      model.save_changes();
    }
  };
  const update = () => {
    const i = model.get("index");
    const n = model.get("count");
    const labels = model.get("labels") || [];
    slider.max = String(Math.max(0, n - 1));
    slider.value = String(i);
    prev.disabled = i <= 0;
    next.disabled = i >= n - 1;
    // "step 2 of 3 · round 1 · keep": the position among the steps, then what the step is
    // (a round number is the loop's, a step number the stepper's; they differ by the start).
    const head = `${model.get("unit")} ${i + 1}`;
    const name = labels[i] && labels[i] !== head ? ` · ${labels[i]}` : "";
    label.textContent = `${head} of ${n}${name}`;
    root.dataset.index = String(i);
    const pages = model.get("pages") || [];
    page.innerHTML = pages.length ? (pages[i] || "") : "";
  };
  prev.addEventListener("click", () => go(model.get("index") - 1));
  next.addEventListener("click", () => go(model.get("index") + 1));
  slider.addEventListener("input", () => go(Number(slider.value)));
  root.addEventListener("keydown", (e) => {
    if (e.key === "ArrowLeft") { go(model.get("index") - 1); e.preventDefault(); }
    if (e.key === "ArrowRight") { go(model.get("index") + 1); e.preventDefault(); }
    if (e.key === "Home") { go(0); e.preventDefault(); }
    if (e.key === "End") { go(model.get("count") - 1); e.preventDefault(); }
  });
  model.on("change:index", update);
  model.on("change:count", update);
  model.on("change:labels", update);
  model.on("change:pages", update);
  update();
}
export default { render };
