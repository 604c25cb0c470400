// Creates the elements of a fastscale stack (grouping constructs, resources, data sources) inside the CDK
// engine's node process, many in one call from Python instead of one call each.
//
// The engine is CDK for Terraform (`cdktf`) or CDK Terrain (`cdktn`); both are loaded by the jsii kernel
// before this library. Their classes are found among the modules node has loaded, by the stack they are asked
// to build into, so the library names neither engine and always uses the very classes the stack is made of.

declare const require: { cache: Record<string, { exports?: unknown } | undefined> };

type Klass = new (...args: any[]) => any;

interface Engine {
  readonly construct: Klass;
  readonly resource: Klass;
  readonly dataSource: Klass;
  readonly output: Klass;
}

const engines = new WeakMap<object, Engine>();

function classNamed(exports: unknown, name: string): Klass | undefined {
  if (exports === null || typeof exports !== 'object') {
    return undefined;
  }
  const value = (exports as Record<string, unknown>)[name];
  return typeof value === 'function' ? (value as Klass) : undefined;
}

function engineOf(stack: any): Engine {
  const cls = stack?.constructor;
  const known = cls ? engines.get(cls) : undefined;
  if (known) {
    return known;
  }
  let construct: Klass | undefined;
  let engine: Omit<Engine, 'construct'> | undefined;
  for (const loaded of Object.values(require.cache)) {
    const exports = loaded?.exports;
    const stackClass = classNamed(exports, 'TerraformStack');
    const resource = classNamed(exports, 'TerraformResource');
    const dataSource = classNamed(exports, 'TerraformDataSource');
    const output = classNamed(exports, 'TerraformOutput');
    if (!engine && stackClass && resource && dataSource && output && stack instanceof stackClass) {
      engine = { resource, dataSource, output };
    }
    const base = classNamed(exports, 'Construct');
    if (!construct && base && classNamed(exports, 'Node') && stack instanceof base) {
      construct = base;
    }
  }
  if (!engine || !construct) {
    throw new Error(
      'fastscale-elements: the stack is not a TerraformStack of a CDK engine loaded in this process');
  }
  const found = { construct, ...engine };
  engines.set(cls, found);
  return found;
}

/**
 * The Python side of a stack: its elements waiting to be created, and what its resources and data sources hold.
 */
export abstract class ElementSource {
  /**
   * Creates the stack's elements that are still waiting (called before the stack is prepared for synthesis).
   */
  public abstract createWaiting(): void;

  /**
   * The attributes of every element, as a JSON array of `[section, type, logicalId, attributes]`
   * (`section` is `resource` or `data`).
   */
  public abstract attributesJson(): string;
}

type Rendered = [string, string, string, Record<string, unknown>];

function addAttributes(document: any, source: ElementSource): void {
  const rendered = JSON.parse(source.attributesJson()) as Rendered[];
  for (const [section, type, logicalId, attributes] of rendered) {
    const address = `${section === 'data' ? 'data.' : ''}${type}.${logicalId}`;
    const body = document?.[section]?.[type]?.[logicalId];
    if (body === undefined) {
      throw new Error(`fastscale-elements: ${address} is not in the stack's document`);
    }
    const clash = Object.keys(attributes).filter((key) => key in body).sort();
    if (clash.length > 0) {
      throw new Error(`${address}: attributes ${JSON.stringify(clash)} are also set by the engine`);
    }
    Object.assign(body, attributes);
  }
}

const SOURCE = Symbol('fastscale-elements.attributeSource');
const renderingClasses = new WeakMap<Klass, Klass>();

function renderingClass(base: Klass): Klass {
  let rendering = renderingClasses.get(base);
  if (!rendering) {
    rendering = class extends base {
      public prepareStack(): void {
        const source: ElementSource | undefined = (this as any)[SOURCE];
        source?.createWaiting();
        super.prepareStack();
      }

      public toTerraform(): any {
        const document = super.toTerraform();
        const source: ElementSource | undefined = (this as any)[SOURCE];
        if (source !== undefined) {
          addAttributes(document, source);
        }
        return document;
      }
    };
    renderingClasses.set(base, rendering);
  }
  return rendering;
}

/**
 * Creates many elements of one stack in one call.
 */
export class ElementBatch {
  /**
   * Creates the elements `specs` describes, in order, and returns them in the same order.
   *
   * Each spec is `[parent, id, kind, type, provider, config]`. `parent` is a construct, or the index (in
   * `specs`) of an element created earlier in this call. `kind` is `group` (a plain construct), `resource`,
   * `data` or `output`; `type` and `provider` are the Terraform type and provider name of a resource or data
   * source (`null` otherwise); `config` is an output's configuration (`value`, `description`, `staticId`).
   *
   * @param stack the TerraformStack every element belongs to
   * @param specs the elements to create
   */
  public static create(stack: any, specs: any[]): any[] {
    const engine = engineOf(stack);
    const made: any[] = [];
    for (const spec of specs) {
      const [parent, id, kind, type, provider, config] = spec as [unknown, string, string, string | null, string | null, any];
      const scope = typeof parent === 'number' ? made[parent] : parent;
      if (scope === undefined || scope === null) {
        throw new Error(`fastscale-elements: element ${made.length} ('${id}') has no parent`);
      }
      if (kind === 'group') {
        made.push(new engine.construct(scope, id));
        continue;
      }
      if (kind === 'output') {
        made.push(new engine.output(scope, id, config));
        continue;
      }
      const element = { terraformResourceType: type, terraformGeneratorMetadata: { providerName: provider } };
      if (kind === 'resource') {
        made.push(new engine.resource(scope, id, element));
      } else if (kind === 'data') {
        made.push(new engine.dataSource(scope, id, element));
      } else {
        throw new Error(`fastscale-elements: element ${made.length} ('${id}') has an unknown kind '${kind}'`);
      }
    }
    return made;
  }

  /**
   * Makes `stack` ask `source` for its waiting elements before it is prepared for synthesis, and add its
   * elements' attributes to its document whenever it is rendered: the engine's own `toTerraform` first, then one
   * call to `source` for the attributes as they are at that moment.
   *
   * @param stack the TerraformStack
   * @param source where the attributes come from
   */
  public static attachSource(stack: any, source: ElementSource): void {
    if (stack === null || typeof stack !== 'object' || typeof stack.toTerraform !== 'function') {
      throw new Error('fastscale-elements: attachSource needs a TerraformStack');
    }
    // The stack's own class gets a subclass that adds the attributes. It has to be the class, not the object:
    // the synthesizer calls `stack.toTerraform()`, and a call from Python reaches the method through the
    // object's class (which is also how a Python override's `super()` reaches it).
    Object.setPrototypeOf(stack, renderingClass(stack.constructor).prototype);
    stack[SOURCE] = source;
  }

  private constructor() {}
}
