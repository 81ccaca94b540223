package modelagent_test

import (
	"context"
	"fmt"
	"os"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
)

// One agent per episode: the agent keeps the conversation of its episode across turns.
func Example() {
	temp := 0.0
	cfg := modelagent.FromEnv(modelagent.Config{Model: "qwen3-8b", Temperature: &temp}, os.Getenv)
	var p *episode.Prepared // from episode.Prepare
	for sample := 0; sample < 4; sample++ {
		agent, err := modelagent.New(cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		res := p.Run(context.Background(), agent, episode.RunOptions{})
		fmt.Println(sample, res.Score, len(agent.Messages()))
	}
}
