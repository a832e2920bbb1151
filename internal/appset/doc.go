// Package appset is Argo CD's ApplicationSet as Ferry reads and runs it:
// the types, strict parsing and validation (every problem named at once),
// the generators' pure logic (list, git directories and files over a tree
// read elsewhere, matrix, merge, selectors) and the templates (fasttemplate
// {{param}} and goTemplate with Sprig) that turn parameters into
// Applications. It holds no Temporal and no I/O: git trees come through a
// Source the caller provides.
//
//	set, err := appset.Read(data)
//	apps, err := appset.Generate(ctx, set, source)
package appset
