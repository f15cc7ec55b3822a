/* pdpkit search: accents folded in the query (the index is folded by _ext/pdpkit_search.py), and chapters
 * ranked above API pages for the words of their titles.
 *
 * Loaded before Sphinx's searchtools.js: the Scorer defined here is the one searchtools.js keeps, and
 * Search._parseQuery is wrapped on DOMContentLoaded, before Search.init runs the query of search.html?q=…
 */
"use strict";

// The theme may include this script twice on search.html: the second run keeps the first one's state.
window.PdpkitSearch = window.PdpkitSearch || (() => {
  // Letters that Unicode decomposition does not reduce to ASCII (the same table is in pdpkit_search.py).
  const EXTRA = {
    "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
  };
  const fold = (text) =>
    text
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .replace(/[ßæœøłđðþı]/giu, (ch) => EXTRA[ch.toLowerCase()] || ch);

  const isApiPage = (docname) => /(^|\/)api(\/|$)/.test(docname);

  // stemmed words of a page's own title (the <h1>), computed once per page
  const titleStems = new Map();
  const pageTitleStems = (docname) => {
    if (!titleStems.has(docname)) {
      const index = Search._index;
      const i = index.docnames.indexOf(docname);
      const html = i >= 0 ? index.titles[i] : "";
      const text = html.replace(/<[^>]*>/g, " ");
      const stemmer = new Stemmer();
      titleStems.set(
        docname,
        new Set(splitQuery(fold(text).toLowerCase()).map((w) => stemmer.stemWord(w)))
      );
    }
    return titleStems.get(docname);
  };

  // does a section title of the page (any heading) hold the stemmed word?
  const inSectionTitle = (word, docname) => {
    const index = Search._index;
    let files = index.titleterms[word];
    if (files === undefined) return false;
    if (files.length === undefined) files = [files];
    return files.includes(index.docnames.indexOf(docname));
  };

  const state = { terms: [] };

  // A chapter whose page title holds every query word comes first, then a chapter with a section title
  // holding them; every other result keeps Sphinx's score.
  const score = (result) => {
    const [docname, , , , base] = result;
    const terms = state.terms;
    if (!terms.length || isApiPage(docname)) return base;
    if (terms.every((t) => pageTitleStems(docname).has(t))) return base + 1000;
    if (terms.every((t) => inSectionTitle(t, docname))) return base + 500;
    return base;
  };

  const install = () => {
    if (typeof Search === "undefined" || Search._pdpkitFolded) return;
    const parse = Search._parseQuery;
    Search._parseQuery = (query) => {
      const parsed = parse(fold(query));
      state.terms = [...parsed[1]];
      return parsed;
    };
    Search._pdpkitFolded = true;
  };
  document.addEventListener("DOMContentLoaded", install);

  return { fold, score, install, state, isApiPage };
})();

// Sphinx's default weights, with the chapter-first score on top (searchtools.js keeps a Scorer already defined).
var Scorer = {
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
  score: (result) => window.PdpkitSearch.score(result),
};
