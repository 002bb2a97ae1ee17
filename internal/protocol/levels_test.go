package protocol

import "testing"

func TestLevelRank(t *testing.T) {
	if LevelRank("debug") >= LevelRank("info") || LevelRank("error") >= LevelRank("emergency") {
		t.Error("levels out of RFC 5424's order")
	}
	if LevelRank("shouting") != len(LogLevels) || KnownLevel("shouting") || !KnownLevel("notice") {
		t.Error("an unknown level must rank as the most severe and not be known")
	}
}
