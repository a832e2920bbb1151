// The UI's one way to write markup: htm's tagged templates over Preact,
// no build step. Every module imports html and the hooks from here.
import { h, render, Component } from '../vendor/preact.mjs';
import htm from '../vendor/htm.mjs';

export { render };
export { useState, useEffect, useMemo, useRef, useCallback } from '../vendor/hooks.mjs';
export const html = htm.bind(h);

// memo makes a component that renders again only when one of its props
// changed (by identity), as preact/compat's memo does: a list of a
// thousand items renders the few whose data moved, not all of them.
// changed(prev, next) may say instead when it must render again.
export function memo(fn, changed = (prev, next) => Object.keys(next).some((k) => next[k] !== prev[k])) {
  return class Memo extends Component {
    shouldComponentUpdate(next) {
      return changed(this.props, next);
    }

    render(props) {
      return fn(props);
    }
  };
}
