/**
 * The task as Quiver's core sees it: {@link dev.quiver.task.TaskScope}, an interface the engine
 * implements (the Spark modules over Spark's {@code TaskContext}, tests over a fake), so that the
 * core never depends on Spark. The broadcast cache and the shuffle readers use it to tie what a
 * task holds to the task's end and to stop a killed task's reads and waits.
 *
 * <p>Quiver owns nothing here: it registers listeners with the task and asks whether the task was
 * killed, from the task's own thread. The listeners run where the engine runs them: completion
 * listeners when the task ends, kill listeners on the thread that kills it (they only wake a
 * waiter).
 */
package dev.quiver.task;
