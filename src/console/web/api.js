// Every call the page makes goes through here: it adds the API key, turns a 401 into the
// login prompt and a failed connection into the "disconnected" banner.
// The key lives in this tab's sessionStorage and only ever travels in the Authorization header.

const KEY_NAME = 'llmesh.apiKey';

export class AuthError extends Error {
  constructor(hadKey) {
    super(hadKey ? 'The API key was rejected' : 'This server needs an API key');
    this.name = 'AuthError';
    this.hadKey = hadKey;
  }
}

export class NetError extends Error {
  constructor() {
    super('The server cannot be reached');
    this.name = 'NetError';
  }
}

export class HttpError extends Error {
  constructor(status, message) {
    super(message || `HTTP ${status}`);
    this.name = 'HttpError';
    this.status = status;
  }
}

export function getKey() {
  try {
    return sessionStorage.getItem(KEY_NAME) || '';
  } catch {
    return ''; // storage disabled: the page still works without keys
  }
}

export function setKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_NAME, key);
    else sessionStorage.removeItem(KEY_NAME);
  } catch {
    /* storage disabled */
  }
}

const listeners = { auth: new Set(), offline: new Set(), online: new Set() };

export function on(event, fn) {
  listeners[event].add(fn);
}

function emit(event, arg) {
  for (const fn of listeners[event]) {
    try {
      fn(arg);
    } catch (e) {
      console.warn('listener failed', e);
    }
  }
}

// fetch with the key. Resolves to the Response for any status but 401; throws AuthError on 401,
// NetError when the connection fails, and rethrows an abort (the caller's signal) untouched.
export async function request(path, { method = 'GET', body, signal, headers = {} } = {}) {
  const h = { ...headers };
  const key = getKey();
  if (key) h.Authorization = `Bearer ${key}`;
  const init = { method, headers: h, signal, cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    if (e && e.name === 'AbortError') throw e;
    emit('offline', e);
    throw new NetError();
  }
  emit('online');
  if (res.status === 401) {
    // Drain the body so the connection can be reused.
    res.text().catch(() => {});
    const err = new AuthError(Boolean(key));
    emit('auth', err);
    throw err;
  }
  return res;
}

// The message of an OpenAI-shaped error body ({"error": {"message": ...}}), else the status.
export async function errorMessage(res) {
  try {
    const j = await res.json();
    if (j && j.error) return typeof j.error === 'string' ? j.error : j.error.message || `HTTP ${res.status}`;
  } catch {
    /* not JSON */
  }
  return `HTTP ${res.status}`;
}

// A server that goes away mid-answer can leave a fetch pending for good, and the poll with it:
// a JSON GET gives up after this long (headers and body) and counts as disconnected.
const JSON_TIMEOUT_MS = 8000;

// A JSON GET (the polls): throws HttpError for a non-2xx answer.
export async function getJSON(path, opts = {}) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), JSON_TIMEOUT_MS);
  try {
    const res = await request(path, { ...opts, signal: ctl.signal });
    if (!res.ok) throw new HttpError(res.status, await errorMessage(res));
    try {
      return await res.json();
    } catch (e) {
      if (ctl.signal.aborted) {
        emit('offline', e);
        throw new NetError();
      }
      throw new HttpError(res.status, `Bad JSON from ${path}`);
    }
  } catch (e) {
    // Our own timer fired while waiting for headers: the server is not answering.
    if (e && e.name === 'AbortError') {
      emit('offline', e);
      throw new NetError();
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
