/** The `properties` package (a .properties parser: file schemas of format properties, the renderings test) ships no types. */
declare module 'properties' {
  const properties: { parse(text: string, options?: Record<string, unknown>): Record<string, unknown> };
  export default properties;
}
