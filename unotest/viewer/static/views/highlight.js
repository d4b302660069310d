// A small tokenizer of the scenario language (docs: /work/shared/spec/language.md §2),
// for highlighting only: it never fails, whatever the text. Comments, strings, template
// literals (with their ${…} expressions highlighted as code), regex literals (where an
// expression may start, as the grammar's contextual lexer decides), numbers, keywords.

const KEYWORDS = new Set(
  ("function let const if else for of while break continue return try catch finally " +
    "throw true false null").split(" "),
);
const IDENT_START = /[A-Za-z_$]/;
const IDENT_PART = /[A-Za-z0-9_$]/;
const NUMBER_RE = /^(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/;
const REGEX_RE = /^\/(?![*/])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n[])+\/[gim]*/;

/** A regex may start after these (an operator, an opening bracket, a keyword like return). */
function regexAllowed(prev) {
  if (prev === null) return true;
  if (prev.type === "keyword") return !["true", "false", "null"].includes(prev.text);
  if (prev.type === "punct") return !/[)\]}]$/.test(prev.text);
  return false;
}

/**
 * Tokens of `text` as [{type, text}], types: keyword, string, template, regex, number,
 * comment, ident, punct, space. Joining their texts gives `text` back exactly.
 */
export function tokenize(text) {
  const out = [];
  let prev = null;
  let i = 0;
  const push = (type, end) => {
    const token = { type, text: text.slice(i, end) };
    out.push(token);
    if (type !== "space" && type !== "comment") prev = token;
    i = end;
  };
  while (i < text.length) {
    const ch = text[i];
    const next = text[i + 1];
    if (/\s/.test(ch)) {
      let end = i + 1;
      while (end < text.length && /\s/.test(text[end])) end++;
      push("space", end);
    } else if (ch === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      push("comment", end < 0 ? text.length : end);
    } else if (ch === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      push("comment", end < 0 ? text.length : end + 2);
    } else if (ch === '"' || ch === "'") {
      push("string", stringEnd(text, i, ch));
    } else if (ch === "`") {
      i = template(text, i, out);
      prev = { type: "template", text: "`" };
    } else if (ch === "/" && regexAllowed(prev) && REGEX_RE.test(text.slice(i, i + 2000))) {
      push("regex", i + REGEX_RE.exec(text.slice(i, i + 2000))[0].length);
    } else if (/[0-9]/.test(ch) || (ch === "." && /[0-9]/.test(next || ""))) {
      push("number", i + NUMBER_RE.exec(text.slice(i, i + 200))[0].length);
    } else if (IDENT_START.test(ch)) {
      let end = i + 1;
      while (end < text.length && IDENT_PART.test(text[end])) end++;
      push(KEYWORDS.has(text.slice(i, end)) ? "keyword" : "ident", end);
    } else {
      push("punct", i + 1);
    }
  }
  return out;
}

/** The index after a quoted string starting at `start` (or the line's end if unclosed). */
function stringEnd(text, start, quote) {
  let j = start + 1;
  while (j < text.length && text[j] !== quote && text[j] !== "\n") {
    j += text[j] === "\\" ? 2 : 1;
  }
  return Math.min(j + 1, text.length);
}

/** A template literal from `start`: its text parts as "template", each ${…} tokenized
 *  as code (nesting kept). Returns the index after the closing backtick. */
function template(text, start, out) {
  let j = start + 1;
  let from = start;
  while (j < text.length && text[j] !== "`") {
    if (text[j] === "\\") {
      j += 2;
    } else if (text[j] === "$" && text[j + 1] === "{") {
      out.push({ type: "template", text: text.slice(from, j + 2) });
      const close = matchingBrace(text, j + 2);
      for (const token of tokenize(text.slice(j + 2, close))) out.push(token);
      from = close;
      j = close;
      if (text[j] === "}") j++;
    } else {
      j++;
    }
  }
  const end = Math.min(j + 1, text.length);
  out.push({ type: "template", text: text.slice(from, end) });
  return end;
}

/** The index of the `}` closing a ${ whose body starts at `start` (strings skipped). */
function matchingBrace(text, start) {
  let depth = 0;
  let j = start;
  while (j < text.length) {
    const ch = text[j];
    if (ch === '"' || ch === "'") {
      j = stringEnd(text, j, ch);
      continue;
    }
    if (ch === "`") {
      j = template(text, j, []);
      continue;
    }
    if (ch === "{") depth++;
    if (ch === "}") {
      if (depth === 0) return j;
      depth--;
    }
    j++;
  }
  return text.length;
}

/** The tokens of `text` split into lines: an array (one per line) of token arrays. */
export function tokenLines(text) {
  const lines = [[]];
  for (const token of tokenize(text)) {
    const parts = token.text.split("\n");
    parts.forEach((part, n) => {
      if (n > 0) lines.push([]);
      if (part) lines[lines.length - 1].push({ type: token.type, text: part });
    });
  }
  return lines;
}
