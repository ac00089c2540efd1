package dev.gatewaylb.internal.health;

import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class FailureStatusesTests {

	@Test
	void countsEveryStatusFrom500UpWhenNoneIsChosen() {
		FailureStatuses all = FailureStatuses.of(List.of());
		assertThat(all).isSameAs(FailureStatuses.SERVER_ERRORS);
		assertThat(IntStream.rangeClosed(100, 499).filter(all::contains)).isEmpty();
		assertThat(IntStream.rangeClosed(500, 999).allMatch(all::contains)).isTrue();
		assertThat(all).hasToString("5xx");
	}

	@Test
	void countsExactlyTheChosenStatusesAcrossBothWords() {
		// 500 and 563 sit in the first word, 564 and 599 in the second.
		FailureStatuses chosen = FailureStatuses.of(List.of(599, 500, 563, 564, 563));
		assertThat(IntStream.rangeClosed(0, 1_000).filter(chosen::contains)).containsExactly(500, 563, 564, 599);
		assertThat(chosen).hasToString("[500, 563, 564, 599]");
		assertThat(chosen).isEqualTo(FailureStatuses.of(List.of(500, 563, 564, 599)))
			.hasSameHashCodeAs(FailureStatuses.of(List.of(500, 563, 564, 599)))
			.isNotEqualTo(FailureStatuses.of(List.of(500, 563, 564)))
			.isNotEqualTo(FailureStatuses.SERVER_ERRORS);
		assertThat(FailureStatuses.of(List.of(502, 503, 504))).hasToString("[502, 503, 504]");
	}

	@Test
	void countsNothingBeyond599OnceStatusesAreChosen() {
		FailureStatuses gateway = FailureStatuses.of(List.of(502, 503, 504));
		assertThat(gateway.contains(600)).isFalse();
		assertThat(gateway.contains(566)).isFalse();
		assertThat(gateway.contains(-1)).isFalse();
	}

	@ParameterizedTest
	@ValueSource(ints = { 429, 499, 600, 200 })
	void rejectsAStatusOutside5xx(int status) {
		assertThatIllegalArgumentException().isThrownBy(() -> FailureStatuses.of(List.of(503, status)))
			.withMessage(status + " (expected: a 5xx status, 500 to 599)");
	}

}
