package catalog

// The host's message limit (trunk.maxMessageBytes, docs/host-limits.md).

// LimitSetting names the setting in messages.
const LimitSetting = "trunk.maxMessageBytes"

// ResponseOverhead is what the envelope of a response adds to its result:
// {"jsonrpc":"2.0","id":…,"result":…} and the newline, with room for an id
// of up to 90 bytes. The host's Conn measures the exact line; estimates
// here only decide which error the host gets.
const ResponseOverhead = 128

// pageOverhead is what a list page adds to its items: the envelope, the
// list's field and a nextCursor (an exported name, base64-encoded).
const pageOverhead = 1024
