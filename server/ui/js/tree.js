// The resource tree of one region: the app's objects and what they own,
// as an ARIA tree (role="tree", items role="treeitem" named Kind/name),
// usable from a keyboard: arrows move, Enter selects.
import { html, memo, useMemo, useRef } from './html.js';

// build nests the region's nodes under their owners; an object whose owner
// is not in the tree is a root.
export function build(nodes) {
  const byUID = new Map(nodes.filter((n) => n.uid).map((n) => [n.uid, { node: n, children: [] }]));
  const roots = [];
  for (const n of nodes) {
    const item = (n.uid && byUID.get(n.uid)) || { node: n, children: [] };
    const parent = (n.parentRefs || []).map((p) => byUID.get(p.uid)).find(Boolean);
    (parent ? parent.children : roots).push(item);
  }
  return roots;
}

export const nodeName = (n) => `${n.kind}/${n.name}`;
export const nodeKey = (n) => [n.region, n.group || '', n.kind, n.namespace || '', n.name].join('/');

// looks are, for every item of roots' subtrees, what it shows besides its
// node (whether it is selected, its tabindex, the part of its status entry
// and hook result it shows) and its signature: that and its children's
// signatures. An item whose signature is the same shows the same (its node
// is the same object while nodes are), so it is not rendered again: a
// status that moves renders its item, not the 600 others.
function looks(roots, { selected, statusOf, hookOf }) {
  const out = new Map();
  const sign = (item, first) => {
    const n = item.node;
    const look = { selected: selected === nodeKey(n), sync: statusOf(n), hook: hookOf(n) };
    look.tabindex = look.selected || (!selected && first) ? 0 : -1;
    const sync = look.sync || {}, hook = look.hook || {};
    look.sig = JSON.stringify([look.selected, look.tabindex, sync.status, sync.syncWave, hook.hookType, hook.hookPhase])
      + '(' + item.children.map((c) => sign(c, false)).join(',') + ')';
    out.set(item, look);
    return look.sig;
  };
  roots.forEach((it, i) => sign(it, i === 0));
  return out;
}

// Item is one node and its children; look is its entry of looks, view
// holds onSelect and every item's look.
const Item = memo(({ item, level, look, view }) => {
  const n = item.node;
  const k = nodeKey(n);
  const { sync, hook } = look;
  const health = n.health && n.health.status;
  const info = (n.info || []).map((i) => `${i.name}: ${i.value}`).join(', ');
  return html`<li role="treeitem" aria-label=${nodeName(n)} aria-level=${level} aria-selected=${look.selected}
      aria-expanded=${item.children.length ? 'true' : undefined} tabindex=${look.tabindex}
      data-key=${k} onClick=${(e) => { e.stopPropagation(); view.onSelect(n); }}>
    <span class="node">
      <span class="kind">${n.kind}</span> <span class="name">${n.name}</span>
      ${sync && html` <span class=${'status sync ' + sync.status.toLowerCase()}>${sync.status}</span>`}
      ${health && html` <span class=${'status health ' + health.toLowerCase()}>${health}</span>`}
      ${sync && sync.syncWave ? html` <span class="tag">wave ${sync.syncWave}</span>` : ''}
      ${hook && html` <span class="tag">${hook.hookType} hook</span> <span class=${'status phase ' + (hook.hookPhase || '').toLowerCase()}>${hook.hookPhase}</span>`}
      ${info && html` <span class="info">${info}</span>`}
      ${n.health && n.health.message && html` <span class="message">${n.health.message}</span>`}
    </span>
    ${item.children.length > 0 && html`<ul role="group">
      ${item.children.map((c) => html`<${Item} key=${nodeKey(c.node)} item=${c} level=${level + 1} look=${view.looks.get(c)} view=${view} />`)}
    </ul>`}
  </li>`;
}, (prev, next) => prev.item !== next.item || prev.level !== next.level || prev.look.sig !== next.look.sig);

// Tree shows the region's tree; selected is the key of the selected node.
// statusOf(node) is its entry of the app's status.resources, hookOf(node)
// its hook result in the last operation; either may be undefined.
export function Tree({ region, nodes, selected, onSelect, statusOf, hookOf }) {
  const ref = useRef(null);
  const roots = useMemo(() => build(nodes), [nodes]);
  const view = { onSelect, looks: looks(roots, { selected, statusOf, hookOf }) };
  const onKeyDown = (e) => {
    const items = [...ref.current.querySelectorAll('[role=treeitem]')];
    const i = items.indexOf(document.activeElement);
    const move = { ArrowDown: 1, ArrowUp: -1 }[e.key];
    if (move !== undefined) {
      e.preventDefault();
      const next = items[Math.min(items.length - 1, Math.max(0, i + move))];
      if (next) { items.forEach((it) => it.setAttribute('tabindex', '-1')); next.setAttribute('tabindex', '0'); next.focus(); }
    } else if (e.key === 'Enter' && i >= 0) {
      e.preventDefault();
      items[i].click();
    }
  };
  return html`<ul role="tree" ref=${ref} aria-label=${'Resources in ' + region} class="tree" onKeyDown=${onKeyDown}>
    ${roots.map((it) => html`<${Item} key=${nodeKey(it.node)} item=${it} level=${1} look=${view.looks.get(it)} view=${view} />`)}
  </ul>`;
}
