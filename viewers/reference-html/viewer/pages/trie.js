// pages/trie.js: Stack trie (not written yet).

import { h, empty } from '../dom.js';

export async function render() {
  return h('div', null, h('h1', null, 'Stack trie'), empty('This page is not written yet.'));
}
