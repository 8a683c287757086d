// Typesets with KaTeX the math that pymdownx.arithmatex (generic mode) marks, and only that:
// text outside an .arithmatex element is never read as math. Bad LaTeX is shown as written.
(function () {
  var delimiters = [
    { left: "\\(", right: "\\)", display: false },
    { left: "\\[", right: "\\]", display: true },
    { left: "$$", right: "$$", display: true },
  ];
  function typeset() {
    document.querySelectorAll(".arithmatex").forEach(function (element) {
      renderMathInElement(element, { delimiters: delimiters, throwOnError: false });
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(typeset); // Material's page-load stream (instant navigation too)
  } else {
    document.addEventListener("DOMContentLoaded", typeset);
  }
})();
