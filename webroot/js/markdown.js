// Agent text is Markdown, rendered with marked and sanitized with DOMPurify before it becomes HTML;
// code blocks get a copy button and, for a language highlight.js knows, colours.
import { marked } from 'marked';
import DOMPurify from 'dompurify';
import { el } from './dom.js';

// No ids, names, classes or styles (the page's own CSS and element names stay the page's), no forms
// or form controls: agent text can neither draw a fake permission card nor take the composer's place.
const PURIFY = {
  SANITIZE_NAMED_PROPS: true,
  FORBID_TAGS: ['form', 'input', 'textarea', 'button', 'select', 'option', 'label', 'fieldset', 'dialog',
    'style', 'template', 'iframe', 'object', 'embed'],
  FORBID_ATTR: ['id', 'name', 'class', 'style', 'form', 'formaction', 'tabindex', 'accesskey'],
};
// One class survives: a code block's language ("language-js", from marked), which only the
// highlighter reads; the page's CSS never names such a class.
DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
  if (node.tagName === 'CODE' && data.attrName === 'class' && /^language-[\w+#-]{1,30}$/.test(data.attrValue)) {
    data.forceKeepAttr = true;
  }
});
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export const markdown = (text) => DOMPurify.sanitize(marked.parse(text ?? '', { async: false }), PURIFY);

// Code blocks get a copy button (the clipboard needs a secure context: https or localhost), and,
// when they name a language highlight.js knows, colours and the language's name.
export function addCopyButtons(root) {
  for (const pre of root.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    const lang = /^language-(.+)$/.exec(code?.className || '')?.[1];
    const known = lang && window.hljs?.getLanguage(lang);
    const b = el('button', 'copy', 'Copy');
    b.type = 'button';
    b.addEventListener('click', async () => {
      try { await navigator.clipboard.writeText(pre.textContent); b.textContent = 'Copied'; }
      catch { b.textContent = 'Copy failed'; }
      setTimeout(() => { b.textContent = 'Copy'; }, 1500);
    });
    const wrap = el('div', 'code');
    pre.replaceWith(wrap);
    wrap.append(b, pre);
    if (known) {
      window.hljs.highlightElement(code);
      wrap.prepend(el('span', 'lang', known.name || lang));
    }
  }
}
