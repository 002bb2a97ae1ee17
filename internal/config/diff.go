package config

// Diff is what a reload from old to new does to the running servers:
// remove are the old specs of servers that are gone or changed, add the new
// specs of servers that are new or changed. A server whose spec is equal in
// both is in neither, so its process and its calls in flight are left
// alone. Specs are matched by server id; one whose name is invalid is left
// out (the Fleet refuses to start it anyway, with an error naming it).
func Diff(old, new []Spec) (remove, add []Spec) {
	oldSpecs, newSpecs := ByServerID(old), ByServerID(new)
	for id, o := range oldSpecs {
		if n, ok := newSpecs[id]; !ok || !n.Equal(o) {
			remove = append(remove, o)
		}
	}
	for id, n := range newSpecs {
		if o, ok := oldSpecs[id]; !ok || !n.Equal(o) {
			add = append(add, n)
		}
	}
	return remove, add
}
