/** Addresses a user gives (a server, a primary, etcd, a webhook), read the one way. */

/** `text` as a URL, or undefined when it is not one. */
export const urlOf = (text: string): URL | undefined => (URL.canParse(text) ? new URL(text) : undefined);

/** Whether the URL is http:// or https://, the only kinds cfghub reaches servers and hooks by. */
export const isHttp = (url: URL): boolean => url.protocol === 'http:' || url.protocol === 'https:';

/** A base address as requests are made from it: `${base}${path}`, with no `/` at its end. */
export const withoutTrailingSlashes = (address: string): string => address.replace(/\/+$/, '');
