import { BadRequestError } from '../platform/errors.ts';

/** A configuration schema as published: `{ properties: { name: { type, enum?, default? } }, required? }`. */
interface ConfigurationSchema {
  properties?: Record<string, { type?: string; enum?: string[] }>;
  required?: string[];
  componentId?: string;
}

/**
 * Checks a configuration against the integration's schema for that level (`account`, `space`):
 * every key must be a declared property of the right type (and one of its `enum` values). Returns
 * whether every required property is set, which decides pending/active.
 */
export function checkConfiguration(schema: unknown, configuration: Record<string, unknown>, where: string): boolean {
  const s = (schema ?? undefined) as ConfigurationSchema | undefined;
  if (!s || !s.properties) {
    // No schema (or a component-rendered one): any object is kept as given.
    return true;
  }
  for (const [key, value] of Object.entries(configuration)) {
    const property = s.properties[key];
    if (!property) throw new BadRequestError(`${where}.${key}: not a configuration property of this integration (known: ${Object.keys(s.properties).join(', ') || 'none'})`);
    if (value === null) continue;
    const type = property.type;
    if (type === 'button') throw new BadRequestError(`${where}.${key}: a button has no value`);
    if ((type === 'string' || type === 'number' || type === 'boolean') && typeof value !== type) {
      throw new BadRequestError(`${where}.${key}: must be a ${type}`);
    }
    if (type === 'string' && property.enum && !property.enum.includes(value as string)) {
      throw new BadRequestError(`${where}.${key}: must be one of ${property.enum.map((v) => JSON.stringify(v)).join(', ')}`);
    }
  }
  return (s.required ?? []).every((key) => configuration[key] !== undefined && configuration[key] !== null && configuration[key] !== '');
}

/** Validates a configuration schema at publish time (names, types, required keys that exist). */
export function checkConfigurationSchema(schema: unknown, where: string): void {
  const s = schema as ConfigurationSchema;
  if ('componentId' in s) return;
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) throw new BadRequestError(`${where}.properties: "${name}" is not a valid property name (letters, digits, _ and -, at most 64)`);
    const p = property as { type?: string; default?: unknown; enum?: string[] };
    if (p.default !== undefined && p.type !== 'button' && typeof p.default !== p.type) {
      throw new BadRequestError(`${where}.properties.${name}.default: must be a ${p.type}`);
    }
    if (p.enum && p.type !== 'string') throw new BadRequestError(`${where}.properties.${name}.enum: only string properties take an enum`);
  }
  for (const key of s.required ?? []) {
    if (!s.properties?.[key]) throw new BadRequestError(`${where}.required: "${key}" is not one of its properties`);
  }
}
