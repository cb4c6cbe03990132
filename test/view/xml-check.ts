// Whether a file strata view writes is well-formed XML 1.0, checked without an XML library:
// the parts its SVG is made of — an XML declaration, comments, elements with quoted attributes,
// text, character references and the five named ones — each checked as the XML
// specification's grammar has it (https://www.w3.org/TR/xml/, §2.2, §2.4, §2.5, §3.1, §4.1).

/** Characters XML cannot hold at all (§2.2), even as references. */
const NOT_CHAR = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/;
const NAME = /[A-Za-z_:][A-Za-z0-9_:.-]*/y;
const SPACE = /[ \t\r\n]*/y;

/** The first thing that makes `text` not well-formed, with where it is; undefined when it is well-formed. */
export function xmlProblem(text: string): string | undefined {
  const bad = NOT_CHAR.exec(text);
  if (bad !== null) return `character U+${bad[0].charCodeAt(0).toString(16).padStart(4, "0")} at ${bad.index}`;
  let at = 0;
  if (text.startsWith("<?xml")) {
    const end = text.indexOf("?>");
    if (end < 0) return "the XML declaration is not closed";
    at = end + 2;
  }
  const open: string[] = [];
  let roots = 0;
  const name = (from: number): string | undefined => {
    NAME.lastIndex = from;
    return NAME.exec(text)?.[0];
  };
  const space = (from: number): number => {
    SPACE.lastIndex = from;
    SPACE.exec(text);
    return SPACE.lastIndex;
  };
  while (at < text.length) {
    const lt = text.indexOf("<", at);
    const chunk = text.slice(at, lt < 0 ? text.length : lt);
    const refs = referenceProblem(chunk);
    if (refs !== undefined) return `${refs} in the text at ${at}`;
    if (open.length === 0 && chunk.trim() !== "") return `text outside the root element at ${at}`;
    if (lt < 0) break;
    if (text.startsWith("<!--", lt)) {
      // §2.5: Comment ::= '<!--' ((Char - '-') | ('-' (Char - '-')))* '-->'
      const end = text.indexOf("-->", lt + 4);
      if (end < 0) return `a comment not closed at ${lt}`;
      const body = text.slice(lt + 4, end);
      if (body.includes("--") || body.endsWith("-")) return `"--" in the comment at ${lt}: ${body}`;
      at = end + 3;
      continue;
    }
    if (text.startsWith("</", lt)) {
      const n = name(lt + 2);
      const close = space(lt + 2 + (n?.length ?? 0));
      if (n === undefined || text[close] !== ">") return `a bad end tag at ${lt}`;
      const expected = open.pop();
      if (expected !== n) return `</${n}> at ${lt} closes <${expected ?? "nothing"}>`;
      at = close + 1;
      continue;
    }
    const n = name(lt + 1);
    if (n === undefined) return `a "<" that starts no tag at ${lt}`;
    let p = lt + 1 + n.length;
    const seen = new Set<string>();
    for (;;) {
      const after = space(p);
      if (text.startsWith("/>", after) || text[after] === ">") {
        if (open.length === 0) roots++;
        if (text[after] === ">") open.push(n);
        p = after + (text[after] === ">" ? 1 : 2);
        break;
      }
      if (after === p) return `no space before an attribute at ${p}`;
      const a = name(after);
      if (a === undefined) return `a bad attribute at ${after}`;
      if (seen.has(a)) return `attribute ${a} twice at ${after}`;
      seen.add(a);
      const eq = space(after + a.length);
      if (text[eq] !== "=") return `attribute ${a} with no value at ${after}`;
      const q = space(eq + 1);
      const quote = text[q];
      if (quote !== '"' && quote !== "'") return `attribute ${a}'s value not quoted at ${q}`;
      const end = text.indexOf(quote, q + 1);
      if (end < 0) return `attribute ${a}'s value not closed at ${q}`;
      const value = text.slice(q + 1, end);
      if (value.includes("<")) return `"<" in attribute ${a}'s value at ${q}`;
      const refs = referenceProblem(value);
      if (refs !== undefined) return `${refs} in attribute ${a}'s value at ${q}`;
      p = end + 1;
    }
    at = p;
  }
  if (open.length > 0) return `<${open.at(-1) ?? ""}> is not closed`;
  return roots === 1 ? undefined : `${roots} root elements`;
}

/** §4.1: every "&" starts a character reference or one of the five named ones. */
function referenceProblem(text: string): string | undefined {
  for (let i = text.indexOf("&"); i >= 0; i = text.indexOf("&", i + 1)) {
    const m = /^&(#[0-9]+|#x[0-9a-fA-F]+|lt|gt|amp|quot|apos);/.exec(text.slice(i, i + 12));
    if (m === null) return `an "&" that starts no reference`;
    const ref = m[1] ?? "";
    if (ref.startsWith("#")) {
      const code = ref.startsWith("#x") ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      const char = code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) || NOT_CHAR.test(String.fromCodePoint(code));
      if (char) return `a reference to U+${code.toString(16)}, not a character`;
    }
  }
  return undefined;
}
