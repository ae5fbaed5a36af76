/** The `properties` package (a .properties parser, used by the renderings test) ships no types. */
declare module 'properties' {
  const properties: { parse(text: string, options?: Record<string, unknown>): Record<string, unknown> };
  export default properties;
}
