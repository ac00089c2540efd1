package dev.gatewaylb.internal.retry;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RetryBudgetTests {

	private static final long SECOND = 1_000_000_000L;

	private final AtomicLong clock = new AtomicLong(1_000 * SECOND);

	@Test
	void allowsTheFloorWithoutTraffic() {
		RetryBudget budget = new RetryBudget(20, 1, this.clock::get);
		int allowed = 0;
		while (budget.tryRetry()) {
			allowed++;
		}
		assertThat(allowed).isEqualTo(RetryBudget.WINDOW_SECONDS);
	}

	@Test
	void capsRetriesOfAStormAtThePercentPlusTheFloorOverTheWindow() {
		RetryBudget budget = new RetryBudget(20, 10, this.clock::get);
		int requests = 0;
		int retries = 0;
		// 30 s of 200 requests per second, every one of which wants a retry.
		for (int second = 0; second < 30; second++) {
			for (int i = 0; i < 200; i++) {
				budget.requested();
				requests++;
				if (budget.tryRetry()) {
					retries++;
				}
			}
			this.clock.addAndGet(SECOND);
		}
		// Per window: 20% of 2000 requests plus 10 x 10 s.
		int windows = 30 / RetryBudget.WINDOW_SECONDS;
		assertThat(retries).isLessThanOrEqualTo(requests * 20 / 100 + 10 * 30 + 200).isGreaterThan(windows * 400);
	}

	@Test
	void retriesSentWithoutAskingSpendTheBudgetOfThoseThatAsk() {
		RetryBudget budget = new RetryBudget(20, 0, this.clock::get);
		for (int i = 0; i < 100; i++) {
			budget.requested();
		}
		for (int i = 0; i < 15; i++) {
			budget.retried(this.clock.get());
		}
		int allowed = 0;
		while (budget.tryRetry()) {
			allowed++;
		}
		assertThat(allowed).as("20 of 100 requests, 15 already spent").isEqualTo(5);
	}

	@Test
	void forgetsRequestsThatLeftTheWindow() {
		RetryBudget budget = new RetryBudget(100, 0, this.clock::get);
		for (int i = 0; i < 50; i++) {
			budget.requested();
		}
		this.clock.addAndGet((RetryBudget.WINDOW_SECONDS + 1) * SECOND);
		assertThat(budget.tryRetry()).isFalse();
		budget.requested();
		assertThat(budget.tryRetry()).isTrue();
		assertThat(budget.tryRetry()).isFalse();
	}

	@Test
	void aShareBelowOnePercentAllowsExactlyThatShareOfRequests() {
		// Hedged requests' budget: max-extra-load 0.005, no floor.
		RetryBudget budget = RetryBudget.ofShare(0.005, 0, this.clock::get);
		for (int i = 0; i < 1_000; i++) {
			budget.requested();
		}
		int allowed = 0;
		while (budget.tryRetry()) {
			allowed++;
		}
		assertThat(allowed).isEqualTo(5);
	}

	@Test
	void aShareThatBinaryCannotHoldStillAllowsItsWholeRetries() {
		// 0.2 x 5 is 1 in decimal but 0.9999999999999999... or 1.0000000000000002 in
		// binary, depending on how it is computed: the budget must allow the 1.
		RetryBudget budget = RetryBudget.ofShare(0.2, 0, this.clock::get);
		for (int i = 0; i < 5; i++) {
			budget.requested();
		}
		assertThat(budget.tryRetry()).isTrue();
		assertThat(budget.tryRetry()).isFalse();
		RetryBudget tenth = RetryBudget.ofShare(0.1, 0, this.clock::get);
		for (int i = 0; i < 30; i++) {
			tenth.requested();
		}
		int allowed = 0;
		while (tenth.tryRetry()) {
			allowed++;
		}
		assertThat(allowed).as("0.1 x 30, where 0.1 * 30 is 3.0000000000000004").isEqualTo(3);
	}

}
