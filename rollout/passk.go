package rollout

// PassAtK is the unbiased estimator of pass@k (Chen et al. 2021, "Evaluating Large Language
// Models Trained on Code"): the chance that at least one of k samples drawn without replacement
// from n samples, c of which passed, passes:
//
//	pass@k = 1 - C(n-c, k) / C(n, k)
//
// computed as a product so that large n does not overflow. It is 1 when n-c < k (every draw of
// k samples holds a passing one). k must be between 1 and n; otherwise the estimator is not
// defined and PassAtK returns -1.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return -1
	}
	if n-c < k {
		return 1
	}
	// C(n-c, k)/C(n, k) = prod_{i=n-c+1}^{n} (1 - k/i)
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// PassHatK is the unbiased estimator of pass^k (Yao et al. 2024, τ-bench): the chance that k
// samples drawn without replacement from n samples, c of which passed, ALL pass:
//
//	pass^k = C(c, k) / C(n, k)
//
// It estimates p^k, where p is the task's true pass rate, and measures consistency: a model
// that solves a task half the time has pass@k near 1 but pass^k near 0.5^k. pass^1 equals
// pass@1 (c/n). It is 0 when c < k. k must be between 1 and n; otherwise it returns -1.
func PassHatK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return -1
	}
	if c < k {
		return 0
	}
	// C(c, k)/C(n, k) = prod_{i=0}^{k-1} (c-i)/(n-i)
	p := 1.0
	for i := 0; i < k; i++ {
		p *= float64(c-i) / float64(n-i)
	}
	return p
}
