package proxy

// MaxMessageBytes is trunk.maxMessageBytes in force now (a reload may
// change it), for the status page, which shows the limit next to the
// notifications it cost.
func (t *Trunk) MaxMessageBytes() int { return t.cfg.Load().Trunk.MaxMessageBytes }

// HasProfile reports whether trunk.profiles in force has one of that name.
func (t *Trunk) HasProfile(name string) bool { return t.access.Load().HasProfile(name) }
