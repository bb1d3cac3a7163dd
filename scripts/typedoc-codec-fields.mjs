// @ts-check
/**
 * A TypeDoc plugin for the io-ts codecs whose types the package exports: their fields are declared as
 * the properties of an object literal (`struct('X', { name: t.string })`), so TypeDoc takes each codec
 * (`t.string`) for the field's default value and prints `name: string = t.string`. A field of a decoded
 * type has no default value: this drops it for every property declared by an object-literal entry.
 */
import { Converter, TypeScript as ts } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const reflection of Object.values(context.project.reflections)) {
      if (!('defaultValue' in reflection) || reflection.defaultValue === undefined) continue;
      const declaration = context.getSymbolFromReflection(reflection)?.declarations?.[0];
      if (declaration !== undefined && ts.isPropertyAssignment(declaration)) reflection.defaultValue = undefined;
    }
  });
}
