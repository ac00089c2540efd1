package dev.gatewaylb.internal.exchange;

import java.io.IOException;
import java.net.ConnectException;
import java.util.Map;

import dev.gatewaylb.internal.hedging.HedgeState;
import dev.gatewaylb.internal.upstream.Outcome;
import dev.gatewaylb.internal.hedging.core.Hedging;
import io.netty.handler.timeout.ReadTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every order in which a hedged round's events can come that its state machine allows:
 * the first attempt's headers (P) or failure (Pf), the backup's start when the hedge
 * delay passed (B), its headers (Bh) or failure (Bf), and the client going away (C).
 * Driven on the test's thread with the hedge timer on an embedded event loop whose time
 * moves only when the test moves it. After each, nothing is left in flight.
 * <p>
 * Service {@code svc}: endpoints a, b, c; {@code max-extra-load: 0.5}, so the delay is
 * the median of the latencies recorded, here all 10 ms; the hedge budget has room for
 * backups unless a test spends it.
 */
class HedgedRaceTests {

	private static final long DELAY_NANOS = 10_000_000L;

	private final ScriptedExchanges service = new ScriptedExchanges(
			Map.of("gateway.lb.defaults.hedge.max-extra-load", "0.5"), "a", "b", "c");

	private final HedgeState counters = this.service.runtime.feature(HedgeState.class);

	/**
	 * The hedge delay as the window's histogram gives it: 10 ms to two significant
	 * digits.
	 */
	private final long delay;

	HedgedRaceTests() {
		this.delay = primeHedging(this.service);
	}

	/**
	 * Records 100 latencies of 10 ms and 100 requests, and waits for the runtime's hedge
	 * window to take them.
	 */
	static long primeHedging(ScriptedExchanges service) {
		Hedging hedging = service.runtime.feature(HedgeState.class).hedging();
		for (int i = 0; i < 100; i++) {
			hedging.record(DELAY_NANOS);
			hedging.requested(service.fixture.clock.get());
		}
		service.rollHedgeWindow();
		assertThat(hedging.delayNanos()).isBetween(DELAY_NANOS * 99 / 100, DELAY_NANOS * 101 / 100);
		return hedging.delayNanos();
	}

	@AfterEach
	void nothingStaysInFlight() {
		assertThat(this.service.inFlight()).isZero();
		this.service.close();
	}

	@Test
	void primaryAnswersBeforeTheDelayAndNoBackupIsSent() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent().answers(200);
		assertThat(run.completed).isTrue();
		this.service.elapse(2 * this.delay);
		assertThat(run.sends).hasSize(1);
		assertThat(this.counters.sent().sum()).isZero();
		run.send(0).completes();
		run.end();
	}

	@Test
	void backupStartsOnAnotherEndpointOnceTheDelayPassed() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent();
		this.service.elapse(this.delay - 1_000_000);
		assertThat(run.sends).as("not before the delay").hasSize(1);
		this.service.elapse(1_000_000);
		assertThat(run.sends).hasSize(2);
		assertThat(run.send(1).endpoint()).isNotEqualTo(run.send(0).endpoint());
		assertThat(this.counters.sent().sum()).isEqualTo(1);
		assertThat(run.completed).isFalse();
		run.send(0).answers(200);
		run.send(0).completes();
		run.end();
	}

	@Test
	void backupStartsThenPrimaryAnswersAndTheBackupIsCancelledChargedNothing() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.send(0).answers(200);
		assertThat(run.completed).isTrue();
		assertThat(run.status()).isEqualTo(200);
		assertThat(run.send(1).attempt.outcome()).isEqualTo(Outcome.Kind.CANCELLED);
		assertThat(run.send(1).attempt.isReleased()).isTrue();
		assertThat(this.counters.lost().sum()).isEqualTo(1);
		// What the cancelled backup's connection reports afterwards counts for nothing.
		run.send(1).attempt.responseFailed(new IOException("connection reset"));
		assertThat(run.send(1).attempt.endpoint().consecutiveFailures()).isZero();
		run.send(0).completes();
		run.end();
	}

	@Test
	void backupStartsThenAnswersFirstAndWins() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.send(1).sent().answers(201);
		assertThat(run.completed).isTrue();
		assertThat(run.status()).as("the winner's answer on the real exchange").isEqualTo(201);
		assertThat(run.lease.current()).isSameAs(run.send(1).attempt);
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.CANCELLED);
		assertThat(run.send(0).attempt.isReleased()).isTrue();
		assertThat(run.send(0).attempt.endpoint().consecutiveFailures()).isZero();
		assertThat(this.counters.won().sum()).isEqualTo(1);
		run.send(1).completes();
		assertThat(run.send(1).attempt.outcome()).isEqualTo(Outcome.Kind.SUCCESS);
		run.end();
	}

	@Test
	void backupStartsThenPrimaryFailsAndIsChargedWhileTheBackupGoesOnToAnswer() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.send(0).fails(new IOException("connection reset"));
		assertThat(run.completed).as("the round waits for the backup").isFalse();
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.CONNECTION_LOST);
		assertThat(run.send(0).attempt.endpoint().consecutiveFailures()).isEqualTo(1);
		assertThat(run.send(0).attempt.isReleased()).isTrue();
		run.send(1).sent().answers(200);
		assertThat(run.completed).isTrue();
		assertThat(run.status()).isEqualTo(200);
		assertThat(this.counters.won().sum()).isEqualTo(1);
		run.send(1).completes();
		run.end();
	}

	@Test
	void backupStartsThenBothFailAndTheLastFailureIsRetriedAsANewRound() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.send(0).fails(new IOException("connection reset"));
		run.send(1).sent().fails(new IOException("connection reset"));
		assertThat(run.send(1).attempt.outcome()).isEqualTo(Outcome.Kind.CONNECTION_LOST);
		assertThat(this.counters.lost().sum()).isEqualTo(1);
		// A GET that lost its connection is retried (502 is in on-statuses), on the one
		// endpoint neither attempt tried.
		assertThat(run.sends).hasSize(3);
		assertThat(run.send(2).endpoint()).isNotIn(run.send(0).endpoint(), run.send(1).endpoint());
		assertThat(this.service.runtime.counters().retried().sum()).isEqualTo(1);
		run.send(2).sent().answers(200);
		run.send(2).completes();
		assertThat(run.status()).isEqualTo(200);
		run.end();
	}

	@Test
	void backupStartsThenFailsAndThePrimaryAnswers() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.send(1).sent().fails(new IOException("connection reset"));
		assertThat(run.completed).isFalse();
		assertThat(run.send(1).attempt.endpoint().consecutiveFailures()).isEqualTo(1);
		run.send(0).answers(200);
		assertThat(run.completed).isTrue();
		assertThat(this.counters.lost().sum()).isEqualTo(1);
		run.send(0).completes();
		run.end();
	}

	@Test
	void backupStartsThenFailsThenThePrimaryFailsAndItsFailureDecides() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.send(1).fails(new ConnectException("refused"));
		run.send(0).fails(ReadTimeoutException.INSTANCE);
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.TIMEOUT);
		// A timeout is never retried: the deadline is spent.
		assertThat(run.sends).hasSize(2);
		assertThat(run.status()).isEqualTo(504);
		run.end();
	}

	@Test
	void primaryFailsBeforeTheDelayAndNoBackupFollows() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent().fails(ReadTimeoutException.INSTANCE);
		assertThat(run.status()).isEqualTo(504);
		this.service.elapse(2 * this.delay);
		assertThat(run.sends).hasSize(1);
		assertThat(this.counters.sent().sum()).isZero();
		run.end();
	}

	@Test
	void clientGoesAwayBeforeTheDelayAndNoBackupFollows() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent();
		run.cancel();
		this.service.elapse(2 * this.delay);
		assertThat(run.sends).hasSize(1);
		assertThat(run.send(0).attempt.isReleased()).isTrue();
		assertThat(run.send(0).attempt.endpoint().consecutiveFailures()).isZero();
	}

	@Test
	void backupStartsThenTheClientGoesAwayAndBothEndChargingNobody() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.cancel();
		assertThat(run.send(0).attempt.isReleased()).isTrue();
		assertThat(run.send(1).attempt.isReleased()).isTrue();
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.CANCELLED);
		assertThat(run.send(1).attempt.outcome()).isEqualTo(Outcome.Kind.CANCELLED);
		assertThat(this.counters.lost().sum()).isEqualTo(1);
		// Headers that still arrive find the round over: nobody reads that body.
		run.send(1).sent().answers(200);
		assertThat(run.status()).isZero();
	}

	@Test
	void backupStartsThenThePrimaryFailsThenTheClientGoesAway() {
		ScriptedExchanges.Run run = raceWithBackup();
		run.send(0).fails(new IOException("connection reset"));
		run.cancel();
		assertThat(run.send(0).attempt.endpoint().consecutiveFailures()).isEqualTo(1);
		assertThat(run.send(1).attempt.outcome()).isEqualTo(Outcome.Kind.CANCELLED);
		assertThat(run.send(1).attempt.endpoint().consecutiveFailures()).isZero();
	}

	@Test
	void noBackupWhenTheBudgetHasNoRoom() {
		// Backups at most half the requests of the window: 100 requests, 50 backups.
		Hedging hedging = this.service.runtime.feature(HedgeState.class).hedging();
		for (int i = 0; i < 50; i++) {
			assertThat(hedging.tryBackup(this.service.fixture.clock.get())).isTrue();
		}
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent();
		this.service.elapse(this.delay);
		assertThat(run.sends).hasSize(1);
		assertThat(this.counters.refusedByBudget().sum()).isEqualTo(1);
		run.send(0).answers(200);
		run.send(0).completes();
		run.end();
	}

	@Test
	void noBackupWhenNoOtherEndpointIsThere() {
		ScriptedExchanges alone = new ScriptedExchanges(Map.of("gateway.lb.defaults.hedge.max-extra-load", "0.5"), "a");
		try {
			primeHedging(alone);
			ScriptedExchanges.Run run = alone.start(HttpMethod.GET);
			run.send(0).sent();
			alone.elapse(2 * this.delay);
			assertThat(run.sends).hasSize(1);
			assertThat(alone.runtime.feature(HedgeState.class).refusedByBudget().sum()).isZero();
			run.send(0).answers(200);
			run.send(0).completes();
			run.end();
			assertThat(alone.inFlight()).isZero();
		}
		finally {
			alone.close();
		}
	}

	@Test
	void aRequestThatMayNotBeSentTwiceIsNeverHedged() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.POST);
		run.send(0).sent();
		this.service.elapse(2 * this.delay);
		assertThat(run.sends).hasSize(1);
		run.send(0).answers(200);
		run.send(0).completes();
		run.end();
	}

	/**
	 * Starts a GET whose first attempt was sent and is still waiting when the delay
	 * passes: the backup has started.
	 */
	private ScriptedExchanges.Run raceWithBackup() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent();
		this.service.elapse(this.delay);
		assertThat(run.sends).hasSize(2);
		return run;
	}

}
