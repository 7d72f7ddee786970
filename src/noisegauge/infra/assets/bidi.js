// Shared by the report (report.js) and the review page (review.js): each page script
// has this file put in place of its /*BIDI*/ line, inside its own function scope.
// Text holding a bidi control or right-to-left script goes in a <bdi>, so an override left
// open in one claim cannot reorder the rest of the page (markup.BIDI is the same class).
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
const TEXT_ONLY = new Set(["OPTION", "TITLE", "TEXTAREA"]);
function textNode(parent, text) {
  if (!BIDI.test(text)) return document.createTextNode(text);
  if (TEXT_ONLY.has(parent.tagName)) return document.createTextNode(text + closers(text));
  const b = document.createElement("bdi");
  b.textContent = text;
  return b;
}
// The embeddings, overrides and isolates text leaves open, closed (where no <bdi> can go).
function closers(text) {
  const stack = [];
  for (const ch of text) {
    if ("\u202A\u202B\u202D\u202E".includes(ch)) stack.push("\u202C");
    else if ("\u2066\u2067\u2068".includes(ch)) stack.push("\u2069");
    else if (ch === "\u202C" && stack[stack.length - 1] === "\u202C") stack.pop();
    else if (ch === "\u2069" && stack.includes("\u2069")) while (stack.pop() !== "\u2069");
  }
  return stack.reverse().join("");
}
