/** Every fact type, in the order the generator draws them from (the order is part of the seeded corpus). */
import type { FactType } from './model.js';
import { petFact } from './pets.js';
import { orderFact, savingsFact, mortgageFact } from './money.js';
import { flightFact, hotelFact } from './travel.js';
import { jobFact, projectFact } from './work.js';
import { medicationFact, injuryFact } from './health.js';
import { instrumentFact, raceFact } from './hobbies.js';
import { weddingFact, birthdayFact } from './family.js';
import { leaseFact, repairFact } from './home.js';
import { carFact, garageFact } from './cars.js';
import { allergyFact, restaurantFact } from './food.js';

export const FACT_TYPES: FactType[] = [
  petFact,
  orderFact,
  flightFact,
  hotelFact,
  jobFact,
  projectFact,
  medicationFact,
  injuryFact,
  savingsFact,
  mortgageFact,
  instrumentFact,
  raceFact,
  weddingFact,
  birthdayFact,
  leaseFact,
  repairFact,
  carFact,
  garageFact,
  allergyFact,
  restaurantFact,
];
