// Pages of a long list, as Argo CD's lists have them: a page of a
// thousand apps renders fifty tiles, not a thousand, so it shows at once
// and a burst of changes costs the tiles in view. The page is in the URL
// (page=2), so is the size when chosen (size=100, size=all), which is also
// remembered for the next visit.
import { html } from './html.js';
import { setParams } from './router.js';

export const pageSizes = [10, 25, 50, 100, 'all'];
const defaultSize = 50;
const remembered = 'ferry.pageSize';

// pageOf answers the items of the URL's page, and the page's facts.
export function pageOf(loc, items) {
  const chosen = loc.searchParams.get('size') || localStorage.getItem(remembered) || '';
  const size = chosen === 'all' ? 'all' : pageSizes.includes(Number(chosen)) ? Number(chosen) : defaultSize;
  const pages = size === 'all' ? 1 : Math.max(1, Math.ceil(items.length / size));
  const page = Math.min(Math.max(1, Number(loc.searchParams.get('page')) || 1), pages);
  const shown = size === 'all' ? items : items.slice((page - 1) * size, page * size);
  return { shown, page, pages, size };
}

export function Pager({ loc, page, pages, size }) {
  const go = (p) => setParams(loc, { page: p > 1 ? String(p) : '' });
  const choose = (v) => {
    localStorage.setItem(remembered, v);
    setParams(loc, { size: v, page: '' });
  };
  return html`<nav class="pager" aria-label="Pagination">
    <button type="button" disabled=${page <= 1} onClick=${() => go(page - 1)}>Previous</button>
    <span>Page ${page} of ${pages}</span>
    <button type="button" disabled=${page >= pages} onClick=${() => go(page + 1)}>Next</button>
    <label>Per page <select value=${String(size)} onChange=${(e) => choose(e.target.value)}>
      ${pageSizes.map((s) => html`<option key=${s} value=${String(s)}>${s}</option>`)}
    </select></label>
  </nav>`;
}
