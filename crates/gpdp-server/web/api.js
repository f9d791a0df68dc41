// The service's HTTP/JSON API, with errors as readable messages.

export class ApiError extends Error {}

export async function api(path, options = {}) {
  const url = new URL(path, document.baseURI);
  const method = options.method || 'GET';
  const headers = { Accept: 'application/json' };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, { method, headers, body: options.body, cache: 'no-store' });
  } catch (e) {
    throw new ApiError(`${method} ${url.pathname}: the server could not be reached (${e.message}).`);
  }
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch (_) {
    body = null;
  }
  if (!res.ok) {
    const msg = body && typeof body.error === 'string' ? body.error : text.trim().slice(0, 300) || res.statusText;
    throw new ApiError(`${method} ${url.pathname} failed (HTTP ${res.status}): ${msg}`);
  }
  if (body === null || typeof body !== 'object') {
    throw new ApiError(`${method} ${url.pathname}: the response is not a JSON object.`);
  }
  return body;
}

