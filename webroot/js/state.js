// The page's one store (store.js's reducer); views subscribe to it.
import { createStore, initialState, reduce } from './store.js';

export const store = createStore(reduce, initialState());
export const dispatch = (action) => store.dispatch(action);
