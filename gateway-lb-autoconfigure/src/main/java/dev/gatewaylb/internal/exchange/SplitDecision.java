package dev.gatewaylb.internal.exchange;

import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.RolloutWindow;
import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

/**
 * What a split decided for an exchange ({@link SplitRouting}): the target service, and
 * what the exchange does for the split on its way.
 *
 * @param service the target's service id
 * @param exchange the exchange to forward: without the split's override header
 * @param hashKey the sticky value, the consistent-hash key of the target, or {@code null}
 * when the split is not sticky
 * @param rollout the rollout's side the exchange's outcomes are judged on, or
 * {@code null}
 * @param rolloutClient the hash of the client's identity on that side
 * @param shadowStage the rollout whose shadow stage gets a copy of the request, or
 * {@code null}
 */
record SplitDecision(String service, ServerWebExchange exchange, @Nullable String hashKey,
		@Nullable RolloutWindow rollout, int rolloutClient, @Nullable RolloutTrack shadowStage) {

	/**
	 * Counts an error of the exchange on its rollout's side, if it is judged: what the
	 * client got was not the release's answer.
	 */
	void failed() {
		RolloutWindow rollout = this.rollout;
		if (rollout != null) {
			rollout.failed(this.rolloutClient);
		}
	}

	/**
	 * Counts an answer of the exchange on its rollout's side, if it is judged.
	 * @param status the status the client got
	 * @param latencyNanos how long the answer took
	 * @param attempt the attempt that answered: a success counted is judged again if its
	 * body breaks
	 */
	void answered(int status, long latencyNanos, Attempt attempt) {
		RolloutWindow rollout = this.rollout;
		if (rollout != null && rollout.answered(this.rolloutClient, status, latencyNanos)) {
			attempt.judgeBody(this);
		}
	}

	/**
	 * Turns the success counted at an attempt's headers into an error of the same client:
	 * its body broke off ({@link Attempt#judgeBody}).
	 */
	void bodyBroke() {
		RolloutWindow rollout = this.rollout;
		if (rollout != null) {
			rollout.bodyBroke(this.rolloutClient);
		}
	}

}
