// Types for the demo's DOM helper h() (widgets/dom.js): the element type of a 'tag.class#id' spec.

type TagOf<S extends string> = S extends `${infer A}#${string}`
  ? TagOf<A>
  : S extends `${infer A}.${string}`
    ? TagOf<A>
    : S;

/** h('input.x#y') is an HTMLInputElement, h('.x') an HTMLDivElement, a spec known only as string an HTMLElement. */
export type ElementOf<S extends string> =
  TagOf<S> extends ''
    ? HTMLDivElement
    : TagOf<S> extends keyof HTMLElementTagNameMap
      ? HTMLElementTagNameMap[TagOf<S>]
      : HTMLElement;

/** What h() and svg() take as children: nodes and text, arrays of them, and false/null/undefined/'' (skipped). */
export type Child = Node | string | number | false | null | undefined | Child[];
