// The well-formedness check the view tests read strata view's SVG with (./xml-check.ts): it
// takes what XML takes and names what it does not.

import { describe, expect, it } from "vitest";
import { xmlProblem } from "./xml-check.js";

describe("xmlProblem: well-formed XML 1.0, as far as strata view's SVG goes", () => {
  it.each([
    {
      name: "a declaration, a comment, nested elements",
      xml: '<?xml version="1.0"?>\n<!-- a - b -->\n<a x="1"><b/></a>\n',
    },
    { name: "references", xml: "<a t='&lt;&#38;&#x41;'>&amp;&quot;&apos;&gt;</a>" },
    { name: "text with > and spaces in tags", xml: '<a  x = "1" >1 > 0</a >' },
  ])("takes $name", ({ xml }) => {
    expect(xmlProblem(xml)).toBeUndefined();
  });

  it.each([
    { name: '"--" in a comment', xml: "<!-- a- --b --><a/>", problem: /"--" in the comment/ },
    { name: 'a comment ending in "-"', xml: "<!-- a---><a/>", problem: /"--" in the comment/ },
    { name: "a control character", xml: "<a>\x07</a>", problem: /character U\+0007/ },
    { name: "a reference to a control character", xml: "<a>&#7;</a>", problem: /U\+7, not a character/ },
    { name: "a bare &", xml: "<a>&</a>", problem: /"&" that starts no reference/ },
    { name: "< in an attribute", xml: '<a x="<"/>', problem: /"<" in attribute x/ },
    { name: "an unquoted attribute", xml: "<a x=1/>", problem: /not quoted/ },
    { name: "an attribute twice", xml: '<a x="1" x="2"/>', problem: /attribute x twice/ },
    { name: "crossed elements", xml: "<a><b></a></b>", problem: /<\/a> at \d+ closes <b>/ },
    { name: "an element not closed", xml: "<a><b></b>", problem: /<a> is not closed/ },
    { name: "two roots", xml: "<a/><b/>", problem: /2 root elements/ },
    { name: "text outside the root", xml: "<a/>x", problem: /text outside the root/ },
  ])("refuses $name", ({ xml, problem }) => {
    expect(xmlProblem(xml)).toMatch(problem);
  });
});
