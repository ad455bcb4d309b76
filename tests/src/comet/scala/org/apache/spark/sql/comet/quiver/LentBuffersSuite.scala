package org.apache.spark.sql.comet.quiver

import org.scalatest.funsuite.AnyFunSuite

/**
 * When the adapter holds a decoded broadcast past its task: only for buffers Comet still has when
 * the task ends, until the last of them comes back.
 */
class LentBuffersSuite extends AnyFunSuite {

  /** The holds a [[LentBuffers]] took, each counting its closes. */
  private class Holds {
    var taken = 0
    var closes = 0

    def take(): AutoCloseable = {
      taken += 1
      () => closes += 1
    }
  }

  test("every buffer back before the task ends: no hold past the task") {
    val holds = new Holds
    val lent = new LentBuffers(() => holds.take())
    lent.lend()
    lent.lend()
    lent.giveBack()
    lent.giveBack()
    lent.taskEnded()
    assert(holds.taken == 0)
  }

  test("a buffer still out when the task ends is held until Comet gives it back") {
    val holds = new Holds
    val lent = new LentBuffers(() => holds.take())
    lent.lend()
    lent.lend()
    lent.giveBack()
    lent.taskEnded()
    assert(holds.taken == 1)
    assert(holds.closes == 0, "the hold ended while Comet still had a buffer")
    lent.giveBack()
    assert(holds.closes == 1)
  }

  test("a hold past the task ends with the last of several buffers, once") {
    val holds = new Holds
    val lent = new LentBuffers(() => holds.take())
    (1 to 3).foreach(_ => lent.lend())
    lent.taskEnded()
    lent.giveBack()
    lent.giveBack()
    assert(holds.closes == 0)
    lent.giveBack()
    assert((holds.taken, holds.closes) == (1, 1))
  }

  test("no buffer is lent once the task has ended and every buffer is back") {
    val lent = new LentBuffers(() => fail("no buffer was out"))
    lent.taskEnded()
    assertThrows[IllegalArgumentException](lent.lend())
  }
}
