package dev.quiver.broadcast;

import dev.quiver.testing.FakeTask;
import java.lang.annotation.ElementType;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Runs a test of a killed waiter twice, its boolean parameter saying whether the waiter's task is
 * told of kills ({@link FakeTask#tellingOfKills()}, as on Spark 4.2) or must check for them.
 */
@Target(ElementType.METHOD)
@java.lang.annotation.Retention(RetentionPolicy.RUNTIME)
@ParameterizedTest(name = "told of kills: {0}")
@ValueSource(booleans = {false, true})
@interface ToldOfKillsOrNot {}
