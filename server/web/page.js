// What the players' page (app.js) and the operators' console (console.js) share: building
// the DOM from data without ever parsing it as HTML, the REST call with its refusal, and the
// games' names (games.js).

export const $ = (id) => document.getElementById(id);

// An element with its attributes, listeners and children: text is always set as text.
export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k.startsWith("data")) node.setAttribute(k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
};

// A REST call as JSON with the bearer token; a refusal throws an Error carrying the API's
// stable code (docs/protocol.md, "Error codes") and its HTTP status.
export async function request(method, path, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(data?.error?.message || `HTTP ${response.status}`);
    error.code = data?.error?.code;
    error.status = response.status;
    throw error;
  }
  return data;
}

export { variantName } from "./games.js";
