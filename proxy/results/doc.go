// Package results fits one tool result to a budget in bytes (a server's
// or a tool's maxResultBytes): what is past the budget never reaches the
// model, but is kept for the caller that made the call, to read on demand.
//
//   - Measure says whether a result is over its budget, and what of it
//     would be kept (Whole: its text, its structuredContent, its other
//     content items);
//   - Over.Cut is the result the host gets instead: the beginning of the
//     text, structuredContent whole when it fits (never cut in the
//     middle), a note telling the model what was left out and how to read
//     the rest, and a resource_link to the whole;
//   - Store keeps the wholes, each for one owner alone, bounded in bytes
//     (in all and per owner) and in time;
//   - Read answers resources/read of a link: the whole, or with ?page=N
//     (from 1) one page of at most the budget.
//
// The store is generic in the owner's key and knows nothing of the trunk.
package results
