/**
 * The form in which agent search compares a display name with a query:
 * lowercased with JavaScript's full Unicode case mapping, then in Unicode
 * NFC. Stored beside each display name (`identity_agents.display_name_search`)
 * and applied to the query, so that "Élodie", "ÉLODIE", "élodie" and the same
 * name typed decomposed (NFD) all match, on SQLite (whose `lower()` maps
 * ASCII only) exactly as on PostgreSQL (whose `lower()` follows the
 * database's locale).
 * @returns the folded text (possibly longer than `text`: "İ" becomes "i̇").
 */
export function nameSearchForm(text: string): string {
  return text.toLowerCase().normalize('NFC');
}
