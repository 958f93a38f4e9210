// Each thread's drawn log, made when the page first opens the thread: the DOM that events were
// drawn into, and what the drawing needs to go on (the message being streamed, the tool boxes).
// Not state (store.js): it is the page itself, rebuilt from the transcript after a reload.
export const views = new Map(); // threadId -> view

export function makeView(id, log) {
  const view = { log, tools: new Map(), allTools: [], cards: new Map(), autos: new Map(), agentMsg: null, userMsg: null, thought: null,
    scrolled: false, terminalOutputs: {},
    lastUserText: null }; // the person's last message, for a failed turn's Try again
  views.set(id, view);
  return view;
}
