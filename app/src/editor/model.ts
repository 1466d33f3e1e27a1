/**
 * Facts of GitBook's document model the editor needs: which blocks each container may hold (the
 * official `@gitbook/api` schema, as Folio's markdown reader applies it in
 * src/content/markdown/parse-containers.ts) and the plain JSON shapes conversion works on.
 */
import type { JSONDocument } from '@gitbook/api';

export type { JSONDocument };

/** Any GitBook node (block, inline, text, leaf, fragment) as plain JSON: conversion keeps keys it does not know. */
export type GBNode = { object: string; type?: string; key?: string; data?: Record<string, unknown>; nodes?: GBNode[]; fragments?: GBNode[]; [k: string]: unknown };
export type GBLeaf = { object: 'leaf'; text: string; marks: GBMark[] };
export type GBMark = { object: 'mark'; type: string; data?: Record<string, unknown> };

const ESSENTIALS = ['paragraph', 'heading-1', 'heading-2', 'heading-3', 'list-ordered', 'list-unordered', 'list-tasks', 'divider'];
const IN_TAB = [...ESSENTIALS, 'content-ref', 'code', 'embed', 'file', 'images', 'drawing', 'hint', 'prompt', 'blockquote', 'math', 'integration'];
const TOP_LEVEL = [
  ...ESSENTIALS, 'blockquote', 'hint', 'prompt', 'images', 'file', 'drawing', 'embed', 'code', 'math', 'expandable', 'tabs',
  'table', 'swagger', 'openapi-operation', 'openapi-schemas', 'openapi-webhook', 'content-ref', 'integration',
  'reusable-content', 'stepper', 'if', 'columns', 'updates',
];

/** The GitBook block types each kind of container may hold (keyed by the container's GitBook type; `document` for the page). */
export const ALLOWED_CHILDREN: Record<string, readonly string[]> = {
  document: TOP_LEVEL,
  if: TOP_LEVEL,
  blockquote: [...ESSENTIALS, 'blockquote'],
  hint: [...ESSENTIALS, 'table', 'embed', 'integration'],
  'list-item': [...ESSENTIALS, 'code', 'hint', 'blockquote', 'math', 'table'],
  'tabs-item': IN_TAB,
  'stepper-step': [...IN_TAB, 'expandable'],
  update: [...IN_TAB, 'tabs', 'expandable'],
  column: [...IN_TAB, 'table', 'expandable', 'stepper'],
  'expandable-body': [...ESSENTIALS, 'file', 'images', 'code', 'table', 'hint', 'prompt', 'blockquote', 'reusable-content', 'integration'],
};

export const HINT_STYLES = ['info', 'success', 'warning', 'danger'] as const;

/** Marks a text leaf may carry, in the order Folio writes them (src/content/markdown/shared.ts MARK_ORDER). */
export const LEAF_MARKS = ['color', 'bold', 'italic', 'strikethrough', 'superscript', 'subscript', 'keyboard', 'code'] as const;

/** A readable name for each GitBook block and inline type, for previews, labels and the diff. */
export const TYPE_LABELS: Record<string, string> = {
  paragraph: 'Paragraph',
  'heading-1': 'Heading 1',
  'heading-2': 'Heading 2',
  'heading-3': 'Heading 3',
  'list-unordered': 'Bulleted list',
  'list-ordered': 'Numbered list',
  'list-tasks': 'Task list',
  'list-item': 'List item',
  divider: 'Divider',
  blockquote: 'Quote',
  hint: 'Hint',
  prompt: 'Prompt',
  if: 'Condition',
  images: 'Images',
  image: 'Image',
  file: 'File',
  drawing: 'Drawing',
  embed: 'Embed',
  code: 'Code block',
  'code-line': 'Code line',
  math: 'Math',
  expandable: 'Expandable',
  tabs: 'Tabs',
  'tabs-item': 'Tab',
  table: 'Table',
  swagger: 'OpenAPI',
  'openapi-operation': 'OpenAPI operation',
  'openapi-schemas': 'OpenAPI schemas',
  'openapi-webhook': 'OpenAPI webhook',
  'content-ref': 'Page link',
  integration: 'Integration block',
  'reusable-content': 'Reusable content',
  stepper: 'Stepper',
  'stepper-step': 'Step',
  columns: 'Columns',
  column: 'Column',
  updates: 'Updates',
  update: 'Update',
  link: 'Link',
  emoji: 'Emoji',
  icon: 'Icon',
  expression: 'Variable',
  'inline-math': 'Math',
  'inline-image': 'Image',
  annotation: 'Annotation',
  mention: 'Mention',
  button: 'Button',
};

export function typeLabel(type: string | undefined): string {
  return (type && TYPE_LABELS[type]) || `Unknown block (${type ?? 'no type'})`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
